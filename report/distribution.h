// Summaries of per-case errors: nearest-rank percentiles, the error/bound histogram and the ratio
// to the naive baseline. NaN counts as worse than every number (+inf included): a NaN error is
// the worst outcome, so it sorts last and a maximum over values holding one is NaN.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace flashproof::report {

// a < b in the order above (NaN greatest).
bool less_with_nan_greatest(double a, double b);

// The nearest-rank p-th percentile (0 < p <= 100) of sorted values (in the order above): the
// smallest value with at least p% of the values at or below it, sorted[ceil(p/100 n) - 1].
double percentile(const std::vector<double>& sorted, double p);

// Max, median and 99th percentile of one value per case; empty (count 0, nullopt) when no case.
struct Distribution {
  std::size_t count = 0;
  std::optional<double> max, p50, p99;
};
Distribution distribution_of(std::vector<double> values);

// Cases of error/bound per bucket: [0,1/64), [1/64,1/16), [1/16,1/4), [1/4,1/2), [1/2,1), >= 1
// (NaN in the last).
inline constexpr std::size_t kBoundBuckets = 6;
std::size_t bound_bucket(double error_over_bound);
std::string bound_bucket_label(std::size_t bucket);  // "[0, 1/64)", ..., ">= 1"
// The bucket's lower edge and upper edge (+inf for the last), for results.json.
double bound_bucket_from(std::size_t bucket);
double bound_bucket_to(std::size_t bucket);

struct BoundHistogram {
  std::array<std::size_t, kBoundBuckets> counts{};
  std::size_t count = 0;
  std::optional<double> max;
  void add(double error_over_bound);
};

// One ratio per case: errors.max_abs over the naive baseline's max_abs, or over rule 3's
// tolerance. A case whose denominator is 0, or whose ratio is undefined (a NaN, inf/inf), is
// skipped and counted.
struct CaseRatio {
  std::vector<double> ratios;
  std::size_t skipped = 0;
  void add(double numerator, double denominator);
  Distribution summary() const { return distribution_of(ratios); }
};

}  // namespace flashproof::report
