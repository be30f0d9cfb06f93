// Which records a report lists by name: the worst cases by error/bound, and every failure and
// crash.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/fuzz_record.h"

namespace flashproof::report {

inline constexpr std::size_t kWorstCasesPerDtype = 5;

struct WorstCase {
  std::size_t record = 0;  // position in the merged records
  std::string tensor;      // the tensor with the case's largest error/bound
  // What the case ranks by: NaN where the tensor is a non-finite failure with a NaN
  // (FuzzRecord::non_finite_failure), +inf where it is one with inf mismatches only, else its
  // rigorous_bound.max_error_over_bound. A NaN or inf where the exact value is finite is an
  // unbounded error, which the record's ratio (over the finite values) leaves out.
  double error_over_bound = 0;
  // The tensor's rigorous_bound.max_error_over_bound, over its finite values (absent where no
  // compared element had a finite bound).
  std::optional<double> finite_error_over_bound;
  std::optional<double> max_ulps;  // that tensor's errors.max_ulps
  // That tensor's errors.nan_mismatch, inf_mismatch where it is a non-finite failure; else 0.
  double nan_mismatch = 0, inf_mismatch = 0;

  bool non_finite() const { return nan_mismatch > 0 || inf_mismatch > 0; }
};

// The n records of dtype with the largest error/bound over their judged tensors
// (FuzzRecord::judged), non-finite failures first (NaN above inf, as error/bound NaN and inf), ties
// by that tensor's ULPs, then by campaign seed, index and implementation (so the choice is
// stable). Records without a judged tensor that has an error/bound or is a non-finite failure are
// not candidates.
std::vector<WorstCase> worst_cases(const std::vector<FuzzRecord>& records, const std::string& dtype,
                                   std::size_t n);

// The record of dtype with the largest error/bound over the finite values of its judged tensors
// (rigorous_bound.max_error_over_bound, non-finite failures not ranked first), by the same order;
// none when no judged tensor has one.
std::optional<WorstCase> largest_finite_error_over_bound(const std::vector<FuzzRecord>& records,
                                                         const std::string& dtype);

// Positions of dtype's records with status fail or crash, by implementation, campaign seed, index.
std::vector<std::size_t> failures(const std::vector<FuzzRecord>& records, const std::string& dtype);

}  // namespace flashproof::report
