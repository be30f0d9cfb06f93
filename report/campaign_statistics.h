// The report's numbers per dtype x implementation x tensor, computed from merged records.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/distribution.h"
#include "report/fuzz_record.h"

namespace flashproof::report {

// One tensor (O, LSE, dQ, dK, dV) of one implementation and dtype. The error statistics are over
// the judged cases (FuzzRecord::judged: status pass, fail or not-judged, tensor not out-of-domain), one value
// per case: that case's largest element error.
struct TensorStats {
  std::string name;
  std::size_t cases = 0;                              // records holding this tensor
  std::size_t pass = 0, fail = 0, out_of_domain = 0, not_judged = 0;  // the tensor's own verdicts
  std::size_t pass_baseline_rule = 0, fail_baseline_rule = 0;        // ... of the second tier
  std::size_t regression = 0;  // records reporting rule 3 for it (verdict unchanged by it)
  Distribution ulps, rel;                             // errors.max_ulps, errors.max_rel
  BoundHistogram error_over_bound;                    // rigorous_bound.max_error_over_bound
  // Judged cases with a compared element whose rigorous bound is infinite (rule 2 cannot judge
  // it); those where no element had a finite bound are left out of error_over_bound.
  std::size_t unbounded = 0;
  // Judged cases with a compared element whose bound is vacuous (at least the exact tensor's size:
  // rule 2 admits 0 and twice the answer there; TensorCheck::vacuous).
  std::size_t vacuous = 0;
  // Judged cases where this tensor failed with NaN or inf values where the exact value is not
  // (FuzzRecord::non_finite_failure). Their error / bound above is over the finite values only, so
  // it does not show the failure: this count does.
  std::size_t non_finite_fail = 0;
  CaseRatio baseline_ratio;                           // errors.max_abs / baseline_errors.max_abs
  // errors.max_abs / rule 3's tolerance, where the rule applies: 1 or more is a rule-3 report.
  // Read beside baseline_ratio: a large ratio to naive's error with a margin below 1 is a case
  // where naive's error was below the rounding-noise floor, which then sets the tolerance.
  CaseRatio regression_margin;
};

struct ImplStats {
  std::string impl;
  std::size_t cases = 0;                                         // records, crashes included
  std::size_t pass = 0, fail = 0, out_of_domain = 0, not_judged = 0, crash = 0;  // record statuses
  std::size_t pass_baseline_rule = 0, fail_baseline_rule = 0;                     // ... of the second tier
  std::size_t not_in_domain = 0;  // records whose check says in_domain false (any status)
  std::size_t non_finite_fail = 0;  // of the fails, those with a non-finite failure (some tensor's)
  std::vector<TensorStats> tensors;
};

struct DtypeStats {
  std::string dtype;
  std::size_t records = 0;  // records of this dtype: (case, implementation) pairs
  std::vector<ImplStats> impls;
};

// Dtypes in the order fp16, bf16, fp32, then others by name; implementations "naive" first, then
// by name; tensors O, LSE, dQ, dK, dV, then others by name.
std::vector<DtypeStats> campaign_statistics(const std::vector<FuzzRecord>& records);

// The orders above, for the plots and listings to share.
bool dtype_before(const std::string& a, const std::string& b);
bool impl_before(const std::string& a, const std::string& b);
bool tensor_before(const std::string& a, const std::string& b);

}  // namespace flashproof::report
