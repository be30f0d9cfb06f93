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
  std::size_t record = 0;          // position in the merged records
  std::string tensor;              // the tensor with the case's largest error/bound
  double error_over_bound = 0;     // that tensor's rigorous_bound.max_error_over_bound
  std::optional<double> max_ulps;  // that tensor's errors.max_ulps
};

// The n records of dtype with the largest error/bound over their judged tensors
// (FuzzRecord::judged), ties by that tensor's ULPs, then by campaign seed, index and
// implementation (so the choice is stable). Records without such a tensor are not candidates.
std::vector<WorstCase> worst_cases(const std::vector<FuzzRecord>& records, const std::string& dtype,
                                   std::size_t n);

// Positions of dtype's records with status fail or crash, by implementation, campaign seed, index.
std::vector<std::size_t> failures(const std::vector<FuzzRecord>& records, const std::string& dtype);

}  // namespace flashproof::report
