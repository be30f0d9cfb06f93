// The split-KV pieces of kernels/algo/split_kv.h as a split kernel and its combine would run them, in
// double: every key block in exactly one split (exhaustively for small sizes, beside the proof
// split_kv_cover), and a row's partials over any split count, empty splits included, combined by
// merge_states into the direct softmax's O and LSE. The twin: an empty split written with
// finalize_row's LSE (+inf) makes the combine NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/algo/split_kv.h"

namespace flashproof::algo {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.69314718055994530942, kLog2e = 1.44269504088896340736;

TEST(SplitKv, EveryKeyBlockInExactlyOneSplit) {
  for (int blocks = 0; blocks <= 40; ++blocks)
    for (int splits = 1; splits <= 48; ++splits) {
      std::vector<int> seen(static_cast<std::size_t>(blocks), 0);
      for (int s = 0; s < splits; ++s) {
        const BlockRange<int> r = split_key_blocks(blocks, splits, s);
        ASSERT_TRUE(0 <= r.begin && r.begin <= r.end && r.end <= blocks) << blocks << " " << splits << " " << s;
        for (int b = r.begin; b < r.end; ++b) ++seen[static_cast<std::size_t>(b)];
      }
      for (int b = 0; b < blocks; ++b) ASSERT_EQ(seen[static_cast<std::size_t>(b)], 1) << blocks << " " << splits;
    }
}

// One row: logits x (log2 units, -inf masked) in blocks of 4 keys, values v. Each split runs the FA2
// step over its blocks, writes (O_s, LSE_s); the combine merges them in split order.
struct Combined {
  double o, lse;
};
Combined split_and_combine(const std::vector<double>& x, const std::vector<double>& v, int splits, bool lse_from_finalize) {
  const int blocks = static_cast<int>((x.size() + 3) / 4);
  double m = kNegInf, l = 0, acc = 0;  // the combine's state
  for (int s = 0; s < splits; ++s) {
    const BlockRange<int> r = split_key_blocks(blocks, splits, s);
    double sm = kNegInf, sl = 0, sacc = 0;
    for (int b = r.begin; b < r.end; ++b) {
      double block_max = kNegInf;
      for (std::size_t j = 4 * b; j < std::min(x.size(), std::size_t(4 * b + 4)); ++j) block_max = std::max(block_max, x[j]);
      const Fa2Rescale<double> step = fa2_rescale(sm, block_max);
      double sum = 0, dot = 0;
      for (std::size_t j = 4 * b; j < std::min(x.size(), std::size_t(4 * b + 4)); ++j) {
        const double p = shifted_exp2(x[j], step.offset);
        sum += p, dot += p * v[j];
      }
      sm = step.max, sl = rescale_accumulate(sl, step.factor, sum), sacc = rescale_accumulate(sacc, step.factor, dot);
    }
    const RowOutput<double> out = finalize_row(sm, sl, kLn2);
    const double o_s = sacc * out.inv_sum;
    const double lse_s = lse_from_finalize ? out.lse : split_lse(sm, sl, kLn2);
    const SplitState<double> st = split_state(lse_s, kLog2e);
    const StateMerge<double> merged = merge_states(m, l, st.max, st.sum);
    m = merged.max, l = merged.sum, acc = merged.coef_a * acc + merged.coef_b * o_s;
  }
  const RowOutput<double> out = finalize_row(m, l, kLn2);
  return {acc * out.inv_sum, out.lse};
}

TEST(SplitKv, PartialsCombineIntoTheRowsSoftmax) {
  std::mt19937_64 rng(53);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 37;
    std::vector<double> x(n), v(n);
    for (std::size_t j = 0; j < n; ++j) x[j] = rng() % 3 == 0 ? kNegInf : 4 * normal(rng), v[j] = normal(rng);
    if (trial % 10 == 0) std::fill(x.begin(), x.end(), kNegInf);  // a row that sees no key
    double mx = kNegInf;
    for (double xi : x) mx = std::max(mx, xi);
    double z = 0, num = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (x[j] != kNegInf) z += std::exp2(x[j] - mx), num += std::exp2(x[j] - mx) * v[j];
    for (int splits : {1, 2, 3, 5, 16, 40}) {
      const Combined c = split_and_combine(x, v, splits, false);
      if (mx == kNegInf) {
        EXPECT_EQ(c.o, 0.0);
        EXPECT_EQ(c.lse, std::numeric_limits<double>::infinity());
        continue;
      }
      EXPECT_NEAR(c.o, num / z, 1e-12 * (1 + std::fabs(num / z))) << trial << " " << splits;
      EXPECT_NEAR(c.lse, (mx + std::log2(z)) * kLn2, 1e-12 * (1 + std::fabs(mx))) << trial << " " << splits;
    }
  }
}

// 40 splits of 2 key blocks: most splits are empty, or see only masked keys.
TEST(SplitKv, AnEmptySplitWrittenAsFinalizeRowsLseMakesTheCombineNaN) {
  const std::vector<double> x = {1, 2, kNegInf, 0.5, kNegInf, kNegInf, kNegInf, kNegInf};
  const std::vector<double> v = {1, -1, 3, 2, 5, 5, 5, 5};
  EXPECT_FALSE(std::isnan(split_and_combine(x, v, 40, false).o));
  EXPECT_TRUE(std::isnan(split_and_combine(x, v, 40, true).o));
}

}  // namespace
}  // namespace flashproof::algo
