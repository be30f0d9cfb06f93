// One line of a campaign's cases.jsonl (docs/fuzz.md), reduced to what the report uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/verdict.h"

namespace flashproof::report {

// One tensor of a check record. Values absent from the record are nullopt; non-finite ones are
// +-infinity or NaN.
struct TensorResult {
  std::string name;     // O, LSE, dQ, dK, dV
  std::optional<Verdict> verdict;  // none when the record names none of core/verdict.h's
  bool regression = false;  // rule 3 (docs/spec.md "Verdicts") reported (error above k x the naive baseline's + floor)
  std::optional<double> max_ulps, max_rel, max_abs;
  std::optional<double> baseline_max_abs;  // the naive baseline's max_abs on the same inputs; NaN where it is not finite
  // Rule 3's tolerance (k x the baseline's error + the rounding-noise floor); absent where the
  // record says the rule does not apply (regression_applies false) or gives none.
  std::optional<double> regression_tolerance;
  // rigorous_bound.max_error_over_bound; absent where no compared element had a finite bound
  // (the check reports 0 there, which would read as a perfectly tight pass).
  std::optional<double> error_over_bound;
  double unbounded = 0;  // rigorous_bound.unbounded: compared elements with no finite bound
  double vacuous = 0;    // rigorous_bound.vacuous: ... with a bound at least the exact tensor's size
  // errors.nan_mismatch and errors.inf_mismatch (0 when absent): elements returned NaN where the
  // exact value is not NaN, and inf where it is finite (or finite where it is inf, or the opposite
  // inf). They are left out of every finite error field above (max_ulps, max_rel, max_abs,
  // error_over_bound), so a tensor failing only by them shows small errors there.
  double nan_mismatch = 0, inf_mismatch = 0;
};

struct FuzzRecord {
  std::string source;         // the campaign directory it was read from
  std::string campaign_seed;  // the record's campaign_seed, else campaign.json's; "" if neither
  long long index = 0;
  std::string impl, where, kind;
  CaseStatus status = CaseStatus::crash;
  std::string dtype;                       // the case's dtype ("?" when the record does not say)
  std::string case_seed;                   // the case's own seed (text)
  long long seqlen_k = -1, head_dim = -1;  // -1 when unknown
  std::optional<double> logit_scale;
  bool in_domain = true;              // record.in_domain (true for a crash, which has no record)
  json::Value case_file;              // the "case" member: a case file object (null when absent)
  std::vector<TensorResult> tensors;  // empty for a crash
  std::string error, failure_file, replay;

  // Whether the tensor's errors enter the statistics: the case was judged (pass or fail) and the
  // tensor itself is not out of the domain.
  bool judged(const TensorResult& t) const;
  // Whether the tensor is a non-finite failure: judged, verdict fail, and some element NaN or inf
  // where the exact value is not (errors.nan_mismatch + inf_mismatch > 0). Its finite error
  // fields do not show that failure.
  bool non_finite_failure(const TensorResult& t) const;
  // Whether some tensor of the record is a non-finite failure.
  bool non_finite_failure() const;
};

// The record in one parsed line; throws std::invalid_argument saying why it is not one.
FuzzRecord fuzz_record_from_json(const json::Value& line);

}  // namespace flashproof::report
