#include "report/distribution.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flashproof::report {
namespace {

constexpr std::array<double, kBoundBuckets - 1> kUpperEdges = {1.0 / 64, 1.0 / 16, 0.25, 0.5, 1.0};
constexpr const char* kLabels[kBoundBuckets] = {"[0, 1/64)",  "[1/64, 1/16)", "[1/16, 1/4)",
                                                "[1/4, 1/2)", "[1/2, 1)",     ">= 1"};

}  // namespace

bool less_with_nan_greatest(double a, double b) {
  if (std::isnan(a)) return false;
  return std::isnan(b) || a < b;
}

double percentile(const std::vector<double>& sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * n));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

Distribution distribution_of(std::vector<double> values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end(), less_with_nan_greatest);
  d.max = values.back();
  d.p50 = percentile(values, 50);
  d.p99 = percentile(values, 99);
  return d;
}

std::size_t bound_bucket(double error_over_bound) {
  // NaN compares false with every edge, so it lands in the last bucket with the values >= 1.
  for (std::size_t b = 0; b < kUpperEdges.size(); ++b)
    if (error_over_bound < kUpperEdges[b]) return b;
  return kUpperEdges.size();
}

std::string bound_bucket_label(std::size_t bucket) { return kLabels[bucket]; }

double bound_bucket_from(std::size_t bucket) { return bucket == 0 ? 0 : kUpperEdges[bucket - 1]; }

double bound_bucket_to(std::size_t bucket) {
  return bucket < kUpperEdges.size() ? kUpperEdges[bucket]
                                     : std::numeric_limits<double>::infinity();
}

void BoundHistogram::add(double error_over_bound) {
  ++counts[bound_bucket(error_over_bound)];
  ++count;
  if (!max || less_with_nan_greatest(*max, error_over_bound)) max = error_over_bound;
}

void CaseRatio::add(double numerator, double denominator) {
  const double ratio = numerator / denominator;
  if (denominator == 0 || std::isnan(ratio)) {
    ++skipped;
    return;
  }
  ratios.push_back(ratio);
}

}  // namespace flashproof::report
