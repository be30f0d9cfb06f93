// Shrinking a failing campaign case to a minimal reproducer: greedy, like RapidCheck's, over the
// shape (batch, heads, sequence lengths, head dim, mask), each candidate checked in an isolated
// child. A candidate is adopted only when it keeps the original's failure (failure_signature.h):
// the same tensor failed by the same rule (the original's first failing tensor, in the order O,
// LSE, dQ, dK, dV, and its first rule), or a crash of the same kind (the same signal, the time
// limit, an exception of the same message shape). The status alone is not enough: a candidate that
// fails another tensor, or the same one by another rule, shows another defect. The inputs are
// regenerated from the same distribution and seed for each candidate shape, so the result is a
// case file that re-runs exactly.
#pragma once

#include <functional>
#include <string>

#include "fuzz/case_runner.h"
#include "fuzz/failure_signature.h"

namespace flashproof::fuzz {

struct ShrinkResult {
  Case c;               // the smallest case found that still fails as the original did
  CaseOutcome outcome;  // its outcome
  FailureTarget target; // the original's failure, which every adopted candidate kept
  int attempts = 0;     // candidates checked
  int adopted = 0;      // candidates adopted
};

// Whether a candidate's outcome is adopted. shrink_case's own rule is keeps_failure with the
// original's target; tests pass another (the status alone, the rule before) to show what it adopts.
using AdoptRule = std::function<bool(const CaseOutcome& candidate)>;

// original: c's outcome (status fail or crash). Stops after max_attempts candidates or
// max_seconds, keeping the smallest case so far that fails as the original did. `adopt`: empty
// for keeps_failure(failure_target(original), candidate).
ShrinkResult shrink_case(const Case& c, const CaseOutcome& original, const CheckOptions& options,
                         const std::string& scratch, double timeout_seconds, int max_attempts = 60,
                         double max_seconds = 300, const AdoptRule& adopt = {});

}  // namespace flashproof::fuzz
