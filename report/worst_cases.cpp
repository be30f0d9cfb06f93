#include "report/worst_cases.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "report/campaign_statistics.h"
#include "report/distribution.h"

namespace flashproof::report {
namespace {

double ulps_or_lowest(const std::optional<double>& u) {
  return u ? *u : -std::numeric_limits<double>::infinity();
}

// a ranks above b: larger error/bound, then a non-finite failure (above an infinite ratio of
// finite values), then more ULPs (NaN the largest of both).
bool ranks_above(const WorstCase& a, const WorstCase& b) {
  if (less_with_nan_greatest(b.error_over_bound, a.error_over_bound)) return true;
  if (less_with_nan_greatest(a.error_over_bound, b.error_over_bound)) return false;
  if (a.non_finite() != b.non_finite()) return a.non_finite();
  return less_with_nan_greatest(ulps_or_lowest(b.max_ulps), ulps_or_lowest(a.max_ulps));
}

// The tensor as a candidate: ranked by its finite values' ratio, or (with non_finite_first) a
// non-finite failure ranked as NaN or inf. None when it has nothing to rank by.
std::optional<WorstCase> candidate(const FuzzRecord& r, const TensorResult& t, std::size_t position,
                                   bool non_finite_first) {
  if (!r.judged(t)) return std::nullopt;
  WorstCase c{position, t.name, 0, t.error_over_bound, t.max_ulps, 0, 0};
  if (non_finite_first && r.non_finite_failure(t)) {
    c.nan_mismatch = t.nan_mismatch;
    c.inf_mismatch = t.inf_mismatch;
    c.error_over_bound = t.nan_mismatch > 0 ? std::numeric_limits<double>::quiet_NaN()
                                            : std::numeric_limits<double>::infinity();
    return c;
  }
  if (!t.error_over_bound) return std::nullopt;
  c.error_over_bound = *t.error_over_bound;
  return c;
}

// The record's judged tensor ranking highest, if any.
std::optional<WorstCase> worst_tensor(const FuzzRecord& r, std::size_t position, bool non_finite_first) {
  std::optional<WorstCase> worst;
  for (const TensorResult& t : r.tensors) {
    const std::optional<WorstCase> c = candidate(r, t, position, non_finite_first);
    if (c && (!worst || ranks_above(*c, *worst))) worst = c;
  }
  return worst;
}

std::vector<WorstCase> ranked(const std::vector<FuzzRecord>& records, const std::string& dtype,
                              std::size_t n, bool non_finite_first) {
  std::vector<WorstCase> candidates;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].dtype == dtype)
      if (auto w = worst_tensor(records[i], i, non_finite_first)) candidates.push_back(std::move(*w));
  const auto order = [&](const WorstCase& a, const WorstCase& b) {
    if (ranks_above(a, b)) return true;
    if (ranks_above(b, a)) return false;
    const FuzzRecord& ra = records[a.record];
    const FuzzRecord& rb = records[b.record];
    return std::tie(ra.campaign_seed, ra.index) != std::tie(rb.campaign_seed, rb.index)
               ? std::tie(ra.campaign_seed, ra.index) < std::tie(rb.campaign_seed, rb.index)
               : impl_before(ra.impl, rb.impl);
  };
  const std::size_t kept = std::min(n, candidates.size());
  std::partial_sort(candidates.begin(), candidates.begin() + kept, candidates.end(), order);
  candidates.resize(kept);
  return candidates;
}

bool listed_before(const FuzzRecord& a, const FuzzRecord& b) {
  if (a.impl != b.impl) return impl_before(a.impl, b.impl);
  return std::tie(a.campaign_seed, a.index) < std::tie(b.campaign_seed, b.index);
}

}  // namespace

std::vector<WorstCase> worst_cases(const std::vector<FuzzRecord>& records, const std::string& dtype,
                                   std::size_t n) {
  return ranked(records, dtype, n, true);
}

std::optional<WorstCase> largest_finite_error_over_bound(const std::vector<FuzzRecord>& records,
                                                         const std::string& dtype) {
  std::vector<WorstCase> largest = ranked(records, dtype, 1, false);
  if (largest.empty()) return std::nullopt;
  return largest.front();
}

std::vector<std::size_t> failures(const std::vector<FuzzRecord>& records,
                                  const std::string& dtype) {
  std::vector<std::size_t> listed;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].dtype == dtype && (is_failure(records[i].status) || records[i].status == CaseStatus::crash))
      listed.push_back(i);
  std::stable_sort(listed.begin(), listed.end(), [&](std::size_t a, std::size_t b) {
    return listed_before(records[a], records[b]);
  });
  return listed;
}

}  // namespace flashproof::report
