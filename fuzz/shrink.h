// Shrinking a failing campaign case to a minimal reproducer: greedy, like RapidCheck's, over the
// shape (batch, heads, sequence lengths, head dim, mask), each candidate checked in an isolated
// child (a crash must still crash). The inputs are regenerated from the same distribution and seed
// for each candidate shape, so the result is a case file that re-runs exactly.
#pragma once

#include <string>

#include "fuzz/case_runner.h"

namespace flashproof::fuzz {

struct ShrinkResult {
  Case c;               // the smallest case found that still ends like the original
  CaseOutcome outcome;  // its outcome
  int attempts = 0;     // candidates checked
  int adopted = 0;      // candidates adopted
};

// original: c's outcome (status fail or crash). Stops after max_attempts candidates or
// max_seconds, keeping the smallest failing case so far.
ShrinkResult shrink_case(const Case& c, const CaseOutcome& original, const CheckOptions& options,
                         const std::string& scratch, double timeout_seconds, int max_attempts = 60,
                         double max_seconds = 300);

}  // namespace flashproof::fuzz
