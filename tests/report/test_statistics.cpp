// The summaries' definitions: nearest-rank percentiles, NaN as the worst value, the error/bound
// buckets, the baseline ratio, and how numbers are shown.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "campaign_fixture.h"
#include "core/json.h"
#include "report/campaign_statistics.h"
#include "report/display_text.h"
#include "report/distribution.h"
#include "report/fuzz_record.h"

namespace flashproof::report {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The O tensor of a record, with its largest error; and an fa2 record holding just it.
testing::TensorSpec o_with_error(double max_abs) {
  testing::TensorSpec o;
  o.name = "O";
  o.max_abs = max_abs;
  return o;
}

FuzzRecord fa2_record(long long index, const testing::TensorSpec& o) {
  testing::RecordSpec r;
  r.index = index;
  r.impl = "fa2";
  r.tensors = {o};
  return fuzz_record_from_json(json::parse(testing::record_line(r)));
}

TEST(Percentile, IsTheNearestRank) {
  const std::vector<double> v = {10, 20, 30, 40};
  EXPECT_EQ(percentile(v, 50), 20);  // ceil(0.5 * 4) = 2nd
  EXPECT_EQ(percentile(v, 51), 30);
  EXPECT_EQ(percentile(v, 99), 40);
  EXPECT_EQ(percentile(v, 100), 40);
  std::vector<double> hundred;
  for (int k = 1; k <= 100; ++k) hundred.push_back(k);
  EXPECT_EQ(percentile(hundred, 99), 99);
  EXPECT_EQ(percentile(hundred, 50), 50);
  EXPECT_EQ(percentile({7}, 1), 7);
}

TEST(Distribution, SortsNaNAboveInfinity) {
  const Distribution d = distribution_of({3, kNaN, 1, kInf, 2});
  EXPECT_EQ(d.count, 5u);
  EXPECT_TRUE(std::isnan(*d.max));
  EXPECT_EQ(*d.p50, 3);  // 1, 2, 3, inf, nan: ceil(2.5) = 3rd
  EXPECT_TRUE(std::isnan(*d.p99));
  const Distribution none = distribution_of({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_FALSE(none.max.has_value());
}

TEST(BoundHistogram, PutsEdgesInTheUpperBucketAndNaNLast) {
  EXPECT_EQ(bound_bucket(0), 0u);
  EXPECT_EQ(bound_bucket(1.0 / 64), 1u);
  EXPECT_EQ(bound_bucket(std::nextafter(1.0 / 64, 0.0)), 0u);
  EXPECT_EQ(bound_bucket(0.25), 3u);
  EXPECT_EQ(bound_bucket(0.999), 4u);
  EXPECT_EQ(bound_bucket(1), 5u);
  EXPECT_EQ(bound_bucket(kInf), 5u);
  EXPECT_EQ(bound_bucket(kNaN), 5u);
  BoundHistogram h;
  for (double x : {0.5, 0.01, 2.0}) h.add(x);
  EXPECT_EQ(h.count, 3u);
  EXPECT_EQ(*h.max, 2);
  EXPECT_EQ(h.counts[0], 1u);
  EXPECT_EQ(h.counts[4], 1u);
  EXPECT_EQ(h.counts[5], 1u);
  EXPECT_EQ(bound_bucket_label(0), "[0, 1/64)");
  EXPECT_EQ(bound_bucket_label(5), ">= 1");
}

TEST(CaseRatio, SkipsZeroBaselinesAndUndefinedRatios) {
  CaseRatio r;
  r.add(2, 1);
  r.add(1, 0);        // baseline 0: skipped
  r.add(kInf, kInf);  // undefined: skipped
  r.add(kInf, 1);
  r.add(3, 1);
  EXPECT_EQ(r.skipped, 2u);
  const Distribution d = r.summary();
  EXPECT_EQ(d.count, 3u);
  EXPECT_EQ(*d.p50, 3);
  EXPECT_EQ(*d.max, kInf);
}

// Where the naive baseline is NaN or inf (a finite exact value), its max_abs covers only its finite
// elements and is not its error: that case's ratio is skipped, not taken against it.
TEST(CaseRatio, SkipsCasesWhoseBaselineIsNotFinite) {
  auto record = [](long long index, double baseline_abs, long long baseline_nan) {
    testing::TensorSpec o = o_with_error(2e-3);
    o.max_ulps = 4;
    o.max_rel = 1e-3;
    o.baseline_max_abs = baseline_abs;
    o.error_over_bound = 0.1;
    o.baseline_nan = baseline_nan;
    return fa2_record(index, o);
  };
  const std::vector<DtypeStats> stats = campaign_statistics({record(0, 1e-3, 0), record(1, 1e-4, 5)});
  ASSERT_EQ(stats.size(), 1u);
  ASSERT_EQ(stats[0].impls.size(), 1u);
  ASSERT_EQ(stats[0].impls[0].tensors.size(), 1u);
  const CaseRatio& ratio = stats[0].impls[0].tensors[0].baseline_ratio;
  EXPECT_EQ(ratio.skipped, 1u);
  ASSERT_EQ(ratio.ratios.size(), 1u);
  EXPECT_DOUBLE_EQ(ratio.ratios[0], 2);
}

// Rule 3's margin is errors.max_abs / tolerance, over the cases where the rule applies: a case with
// a nearly exact naive baseline has a huge ratio to naive's error but a margin below 1 (the floor
// sets its tolerance), and a case the rule does not judge (regression_applies false) is left out.
TEST(CaseRatio, RegressionMarginIsTheErrorOverRule3sToleranceWhereTheRuleApplies) {
  auto record = [](long long index, double baseline_abs, double tolerance, bool applies) {
    testing::TensorSpec o = o_with_error(2e-3);
    o.baseline_max_abs = baseline_abs;
    o.tolerance = tolerance;
    o.regression_applies = applies;
    return fa2_record(index, o);
  };
  const std::vector<DtypeStats> stats = campaign_statistics(
      {record(0, 1e-40, 4e-3, true), record(1, 1e-3, 1e-3, true), record(2, 1e-3, 1e-4, false)});
  ASSERT_EQ(stats.size(), 1u);
  const TensorStats& o = stats[0].impls.at(0).tensors.at(0);
  EXPECT_DOUBLE_EQ(*o.baseline_ratio.summary().max, 2e37);
  const Distribution margin = o.regression_margin.summary();
  EXPECT_EQ(margin.count, 2u);
  EXPECT_EQ(o.regression_margin.skipped, 0u);
  EXPECT_DOUBLE_EQ(*margin.max, 2);
  EXPECT_DOUBLE_EQ(*margin.p50, 0.5);
}

// The check reports error / bound 0 where no compared element has a finite bound; the report counts
// such a case as unbounded and leaves it out of the buckets, where it would read as a tight pass.
// A case with some elements bounded keeps its ratio and is counted too.
TEST(BoundHistogram, LeavesOutCasesWithNoFiniteBoundAndCountsThem) {
  auto record = [](long long index, long long unbounded) {
    testing::TensorSpec o = o_with_error(2e-3);
    o.baseline_max_abs = 1e-3;
    o.error_over_bound = unbounded == 320 ? 0 : 0.5;
    o.unbounded = unbounded;
    return fa2_record(index, o);
  };
  const std::vector<DtypeStats> stats = campaign_statistics({record(0, 0), record(1, 320), record(2, 7)});
  ASSERT_EQ(stats.size(), 1u);
  const TensorStats& o = stats[0].impls.at(0).tensors.at(0);
  EXPECT_EQ(o.unbounded, 2u);
  EXPECT_EQ(o.error_over_bound.count, 2u);
  EXPECT_EQ(o.error_over_bound.counts[0], 0u);  // [0, 1/64): not the unbounded case's 0
}

TEST(NumberText, ShowsThreeDigitsWholeNumbersAndNonFinite) {
  EXPECT_EQ(number_text(509.0), "509");
  EXPECT_EQ(number_text(0.48213944511727141), "0.482");
  EXPECT_EQ(number_text(3.2e7), "3.2e7");
  EXPECT_EQ(number_text(1.25e-5), "1.25e-5");
  EXPECT_EQ(number_text(kInf), "inf");
  EXPECT_EQ(number_text(-kInf), "-inf");
  EXPECT_EQ(number_text(kNaN), "nan");
  EXPECT_EQ(number_text(std::optional<double>()), "-");
  EXPECT_EQ(html_escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
  EXPECT_EQ(markdown_cell("a|b\nc"), "a\\|b c");
}

}  // namespace
}  // namespace flashproof::report
