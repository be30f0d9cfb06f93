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

// a ranks above b: larger error/bound, then more ULPs (NaN the largest of both).
bool ranks_above(const WorstCase& a, const WorstCase& b) {
  if (less_with_nan_greatest(b.error_over_bound, a.error_over_bound)) return true;
  if (less_with_nan_greatest(a.error_over_bound, b.error_over_bound)) return false;
  return less_with_nan_greatest(ulps_or_lowest(b.max_ulps), ulps_or_lowest(a.max_ulps));
}

// The record's judged tensor ranking highest, if any.
std::optional<WorstCase> worst_tensor(const FuzzRecord& r, std::size_t position) {
  std::optional<WorstCase> worst;
  for (const TensorResult& t : r.tensors) {
    if (!r.judged(t) || !t.error_over_bound) continue;
    const WorstCase c{position, t.name, *t.error_over_bound, t.max_ulps};
    if (!worst || ranks_above(c, *worst)) worst = c;
  }
  return worst;
}

bool listed_before(const FuzzRecord& a, const FuzzRecord& b) {
  if (a.impl != b.impl) return impl_before(a.impl, b.impl);
  return std::tie(a.campaign_seed, a.index) < std::tie(b.campaign_seed, b.index);
}

}  // namespace

std::vector<WorstCase> worst_cases(const std::vector<FuzzRecord>& records, const std::string& dtype,
                                   std::size_t n) {
  std::vector<WorstCase> candidates;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].dtype == dtype)
      if (auto w = worst_tensor(records[i], i)) candidates.push_back(std::move(*w));
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

std::vector<std::size_t> failures(const std::vector<FuzzRecord>& records,
                                  const std::string& dtype) {
  std::vector<std::size_t> listed;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (records[i].dtype == dtype && (records[i].status == CaseStatus::fail || records[i].status == CaseStatus::crash))
      listed.push_back(i);
  std::stable_sort(listed.begin(), listed.end(), [&](std::size_t a, std::size_t b) {
    return listed_before(records[a], records[b]);
  });
  return listed;
}

}  // namespace flashproof::report
