// Runs one property over generated cases with RapidCheck: the case count and size come from
// RC_PARAMS (max_success, seed, reproduce=...), a failure is shrunk to a minimal case, and the
// run reports what it covered (RC_TAG distribution) and how many cases it ran. A run of zero
// cases is a failure (docs/spec.md "Verdicts": a property that ran zero cases fails).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/attention_impl.h"
#include "harness/check.h"
#include "properties/properties.h"

namespace flashproof::properties {

struct PropertyRun {
  bool passed = false;
  int cases = 0;                         // successful cases before the end or the failure
  std::string message;                   // RapidCheck's report (counterexample, coverage)
  std::optional<Case> counterexample;    // the minimal failing case, when one failed
  std::string why;                       // its one-line reason
  std::string reproduce;                 // RC_PARAMS="reproduce=..." that re-runs the failure
  std::string case_file;                 // where the failing case was saved for `flashproof replay`
};

// test_id names the run for RC_PARAMS="reproduce=..." (e.g. "differential/fa2"). A failing case is
// saved as a case file (harness/case_file.h, naming the property) in $FLASHPROOF_CASE_DIR, by
// default ./failed-cases, as <test_id with '/' replaced>.json.
// max_success > 0 overrides RC_PARAMS's case count (the broken-variant tests search longer); a
// seed overrides RC_PARAMS's (the Python package's properties.run(seed=...)).
PropertyRun run_property(const Property& property, AttentionImpl& impl, const std::string& test_id,
                         int max_success = 0, std::optional<std::uint64_t> seed = std::nullopt);

}  // namespace flashproof::properties
