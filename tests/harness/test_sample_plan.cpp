// The structured sample of a sampled check (harness/sample_plan.h): the positions where bugs sit are
// always in it, the random part is seeded, and a sample that would cover the problem is the problem.
#include <gtest/gtest.h>

#include <cstdint>

#include "harness/sample_plan.h"
#include "tests/sampled_problems.h"

namespace flashproof {
namespace {

// Only the sizes matter to the sample (and head_dim to the offset crossings).
Problem problem(std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t sq, std::int64_t sk) {
  return testing_support::make_problem(DType::fp16, batch, hq, hkv, sq, sk, 64);
}

bool row(const OutputSample& s, const Problem& p, std::int64_t b, std::int64_t h, std::int64_t i) {
  return s.row((b * p.heads_q + h) * p.seqlen_q + i);
}
bool col(const OutputSample& s, const Problem& p, std::int64_t b, std::int64_t h, std::int64_t j) {
  return s.col((b * p.heads_kv + h) * p.seqlen_k + j);
}

TEST(SamplePlan, NoSampleOrACoveringOneIsTheWholeProblem) {
  const Problem p = problem(1, 2, 1, 40, 50);
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1000}}) {
    const SamplePlan plan = plan_sample(p, n, 1);
    EXPECT_TRUE(plan.full) << n;
    EXPECT_EQ(plan.sample.row_count(), 80);
    EXPECT_EQ(plan.sample.col_count(), 50);
  }
}

TEST(SamplePlan, HoldsTheEdgesTilesAndSixteenBitLimits) {
  const Problem p = problem(2, 4, 2, 3000, 70000);
  const SamplePlan plan = plan_sample(p, 16, 5);
  ASSERT_FALSE(plan.full);
  const OutputSample& s = plan.sample;
  for (std::int64_t i : {0, 1, 63, 64, 127, 128, 2999, 2998, 2944, 2943})  // tiles of 64 and 128, ends
    EXPECT_TRUE(row(s, p, 0, 0, i) && row(s, p, 1, 3, i)) << i;
  for (std::int64_t j : {0, 69999, 65535, 65536, 65537, 32767, 32768, 69888, 69887})
    EXPECT_TRUE(col(s, p, 0, 0, j) && col(s, p, 1, 1, j)) << j;
  EXPECT_FALSE(row(s, p, 0, 0, 1500) && row(s, p, 0, 0, 1501) && row(s, p, 0, 0, 1502));  // not everything
  for (std::int64_t h : {1, 2})  // heads inside a GQA group
    EXPECT_TRUE(row(s, p, 0, h, 0) && row(s, p, 0, h, 1500) && row(s, p, 0, h, 2999)) << h;
  EXPECT_TRUE(col(s, p, 0, 1, 35000));
  EXPECT_EQ(s.structured_rows + 16 >= s.row_count(), true);
  EXPECT_GE(s.row_count(), s.structured_rows + 1);  // the random part adds rows
  EXPECT_NE(s.description.find("of 24000 query rows"), std::string::npos) << s.description;
}

TEST(SamplePlan, HoldsTheMaskEdges) {
  Problem p = problem(1, 1, 1, 1000, 600);  // causal, bottom-right: rows 0..399 see no key
  p.window_left = -1, p.window_right = 0;
  const OutputSample s = plan_sample(p, 8, 1).sample;
  EXPECT_TRUE(row(s, p, 0, 0, 399));  // the last row that sees no key
  EXPECT_TRUE(row(s, p, 0, 0, 400));  // the first that sees one
  Problem w = problem(1, 1, 1, 1000, 1000);  // a window of 100 keys to the left
  w.window_left = 100, w.window_right = 0;
  const OutputSample sw = plan_sample(w, 8, 1).sample;
  EXPECT_TRUE(row(sw, w, 0, 0, 100) && row(sw, w, 0, 0, 101));  // first visible key leaves 0
  EXPECT_TRUE(col(sw, w, 0, 0, 899) && col(sw, w, 0, 0, 900));  // last seeing row reaches the end
}

TEST(SamplePlan, HoldsTheGridLimitHeadsAndThirtyTwoBitOffsets) {
  const Problem p = problem(2, 40000, 40000, 8, 8);  // 80000 (batch, head) pairs
  const OutputSample s = plan_sample(p, 4, 1).sample;
  EXPECT_TRUE(row(s, p, 1, 65535 - 40000, 0) && row(s, p, 1, 65536 - 40000, 7));
  EXPECT_TRUE(col(s, p, 1, 65535 - 40000, 0));
  // The Q row whose first element sits at 2^31 in [b][s][h][d] layout: row 2^31 / 64 = 2^25.
  const Problem big = problem(1, 64, 64, 1 << 20, 16);  // 2^26 rows of 64 elements
  const OutputSample sb = plan_sample(big, 4, 1).sample;
  const std::int64_t r = std::int64_t{1} << 25;  // [s][h] order: row r is (s = r / 64, h = r % 64)
  EXPECT_TRUE(row(sb, big, 0, r % 64, r / 64));
}

TEST(SamplePlan, TheRandomPartIsSeeded) {
  const Problem p = problem(1, 4, 4, 5000, 5000);
  const OutputSample a = plan_sample(p, 64, 11).sample, b = plan_sample(p, 64, 11).sample;
  const OutputSample c = plan_sample(p, 64, 12).sample;
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_NE(a.rows, c.rows);
  EXPECT_EQ(a.structured_rows, c.structured_rows);
}

}  // namespace
}  // namespace flashproof
