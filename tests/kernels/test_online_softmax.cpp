// The online-softmax pieces of kernels/algo run as the kernels run them (block by block, in double
// and in float) against a direct softmax: FA2 and FA1 forms, merges in any order, masked rows, and
// logits at the edge of the valid domain (no NaN/inf, weights in [0, 1]).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/algo/online_softmax.h"
#include "kernels/algo/softmax_backward.h"

namespace flashproof::algo {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.69314718055994530942;

struct Row {
  std::vector<double> x;  // logits in log2 units (-inf: masked)
  std::vector<double> v;  // one value coordinate per key
};

struct Exact {
  double o;
  double lse;
};

Exact direct_softmax(const Row& row) {
  long double m = -INFINITY;
  for (double x : row.x) m = std::max<long double>(m, x);
  if (m == -INFINITY) return {0.0, std::numeric_limits<double>::infinity()};
  long double sum = 0, weighted = 0;
  for (std::size_t k = 0; k < row.x.size(); ++k) {
    const long double w = std::exp2l(row.x[k] - m);
    sum += w;
    weighted += w * row.v[k];
  }
  return {static_cast<double>(weighted / sum), static_cast<double>((m + std::log2l(sum)) * kLn2)};
}

std::vector<std::size_t> random_block_ends(std::size_t n, std::mt19937_64& rng) {
  std::vector<std::size_t> ends;
  for (std::size_t at = 0; at < n;) {
    at = std::min(n, at + 1 + rng() % 40);
    ends.push_back(at);
  }
  return ends;
}

// The FA2 loop as documented in online_softmax.h.
template <class T>
Exact run_fa2(const Row& row, const std::vector<std::size_t>& ends, bool drop_rescale = false) {
  T m = -std::numeric_limits<T>::infinity(), l = 0, acc = 0;
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    T block_max = -std::numeric_limits<T>::infinity();
    for (std::size_t k = begin; k < end; ++k) block_max = Domain<T>::max(block_max, T(row.x[k]));
    const Fa2Rescale<T> r = fa2_rescale(m, block_max);
    T sum = 0, pv = 0;
    for (std::size_t k = begin; k < end; ++k) {
      const T p = shifted_exp2(T(row.x[k]), r.offset);
      sum += p;
      pv += p * T(row.v[k]);
    }
    const T factor = drop_rescale ? T(1) : r.factor;
    l = rescale_accumulate(l, factor, sum);
    acc = rescale_accumulate(acc, factor, pv);
    m = r.max;
    begin = end;
  }
  const RowOutput<T> out = finalize_row(m, l, T(kLn2));
  return {double(acc * out.inv_sum), double(out.lse)};
}

// The FA1 loop as documented in online_softmax.h.
Exact run_fa1(const Row& row, const std::vector<std::size_t>& ends) {
  double m = kNegInf, l = 0, o = 0;
  std::size_t begin = 0;
  for (std::size_t end : ends) {
    double block_max = kNegInf;
    for (std::size_t k = begin; k < end; ++k) block_max = std::max(block_max, row.x[k]);
    const double offset = exponent_offset(block_max);
    double sum = 0, pv = 0;
    for (std::size_t k = begin; k < end; ++k) {
      const double p = shifted_exp2(row.x[k], offset);
      sum += p;
      pv += p * row.v[k];
    }
    const Fa1Combine<double> c = fa1_combine(m, l, block_max, sum);
    o = c.coef_old * o + c.coef_block * pv;
    m = c.max;
    l = c.sum;
    begin = end;
  }
  return {o, finalize_row(m, l, kLn2).lse};
}

Row random_row(std::mt19937_64& rng, double spread, double masked_fraction) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::size_t n = 1 + rng() % 300;
  Row row;
  for (std::size_t k = 0; k < n; ++k) {
    const bool masked = std::uniform_real_distribution<double>(0, 1)(rng) < masked_fraction;
    row.x.push_back(masked ? kNegInf : spread * u(rng));
    row.v.push_back(u(rng));
  }
  return row;
}

void expect_close(const Exact& got, const Exact& want, double tol, const char* what) {
  if (std::isinf(want.lse)) {
    EXPECT_EQ(got.o, 0.0) << what;
    EXPECT_EQ(got.lse, want.lse) << what;
    return;
  }
  EXPECT_NEAR(got.o, want.o, tol * (1 + std::fabs(want.o))) << what;
  EXPECT_NEAR(got.lse, want.lse, tol * (1 + std::fabs(want.lse))) << what;
}

TEST(OnlineSoftmax, Fa2AndFa1MatchTheDirectSoftmaxForAnyPartition) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 400; ++trial) {
    const Row row = random_row(rng, trial % 2 ? 60.0 : 2.0, trial % 3 == 0 ? 0.5 : 0.0);
    const Exact want = direct_softmax(row);
    expect_close(run_fa2<double>(row, random_block_ends(row.x.size(), rng)), want, 1e-12, "fa2");
    expect_close(run_fa1(row, random_block_ends(row.x.size(), rng)), want, 1e-12, "fa1");
  }
}

TEST(OnlineSoftmax, FullyMaskedRowGivesZeroAndInfiniteLse) {
  Row row;
  row.x.assign(70, kNegInf);
  row.v.assign(70, 1.0);
  const std::vector<std::size_t> ends{16, 32, 70};
  for (const Exact& e : {run_fa2<double>(row, ends), run_fa1(row, ends)}) {
    EXPECT_EQ(e.o, 0.0);
    EXPECT_EQ(e.lse, std::numeric_limits<double>::infinity());
  }
  const Exact f = run_fa2<float>(row, ends);
  EXPECT_EQ(f.o, 0.0);
  EXPECT_EQ(f.lse, std::numeric_limits<double>::infinity());
}

TEST(OnlineSoftmax, MergeInAnyOrderGivesTheSameResult) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Row row = random_row(rng, 30.0, 0.3);
    // One partial state per block, then merged left to right and right to left.
    struct Partial { double m, l, acc; };
    std::vector<Partial> parts;
    std::size_t begin = 0;
    for (std::size_t end : random_block_ends(row.x.size(), rng)) {
      Row block{{row.x.begin() + begin, row.x.begin() + end}, {row.v.begin() + begin, row.v.begin() + end}};
      double m = kNegInf;
      for (double x : block.x) m = std::max(m, x);
      double l = 0, acc = 0;
      for (std::size_t k = 0; k < block.x.size(); ++k) {
        const double p = shifted_exp2(block.x[k], exponent_offset(m));
        l += p;
        acc += p * block.v[k];
      }
      parts.push_back({m, l, acc});
      begin = end;
    }
    const auto fold = [](auto first, auto last) {
      Partial s{kNegInf, 0, 0};  // the identity
      for (auto it = first; it != last; ++it) {
        const StateMerge<double> r = merge_states(s.m, s.l, it->m, it->l);
        s = {r.max, r.sum, r.coef_a * s.acc + r.coef_b * it->acc};
      }
      return s;
    };
    const Exact want = direct_softmax(row);
    for (const Partial& s : {fold(parts.begin(), parts.end()), fold(parts.rbegin(), parts.rend())}) {
      const RowOutput<double> out = finalize_row(s.m, s.l, kLn2);
      expect_close({s.acc * out.inv_sum, out.lse}, want, 1e-12, "merge");
    }
  }
}

// Logits at the edge of the valid domain (|scaled logit| up to 2^65 in log2 units): the float path
// must produce neither NaN nor inf, and recompute_prob must stay in [0, 1].
TEST(OnlineSoftmax, FloatPathAtTheDomainEdgeHasNoNanOrInf) {
  std::mt19937_64 rng(13);
  int unclamped_above_one = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Row row = random_row(rng, 0x1p65, 0.2);
    const auto ends = random_block_ends(row.x.size(), rng);
    const Exact got = run_fa2<float>(row, ends);
    const Exact want = direct_softmax(row);
    EXPECT_TRUE(std::isfinite(got.o)) << trial;
    EXPECT_EQ(std::isinf(got.lse), std::isinf(want.lse)) << trial;
    if (std::isinf(want.lse)) continue;
    const float lse2 = lse_log2(float(got.lse), float(1.0 / kLn2));
    for (double x : row.x) {
      const float p = recompute_prob(float(x), lse2);
      EXPECT_TRUE(p >= 0.0f && p <= 1.0f) << x << " -> " << p;
      unclamped_above_one += Domain<float>::exp2(float(x) - lse2) > 1.0f ? 1 : 0;
    }
  }
  // Why the clamp is there: unclamped, rounding pushes some arguments above 0 at this scale.
  EXPECT_GT(unclamped_above_one, 0);
}

// The loop above can fail: without the rescale factor the FA2 result is wrong.
TEST(OnlineSoftmax, DroppingTheRescaleFactorIsDetected) {
  std::mt19937_64 rng(17);
  int wrong = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Row row = random_row(rng, 20.0, 0.0);
    const auto ends = random_block_ends(row.x.size(), rng);
    if (ends.size() < 2) continue;
    const Exact got = run_fa2<double>(row, ends, /*drop_rescale=*/true);
    const Exact want = direct_softmax(row);
    wrong += std::fabs(got.o - want.o) > 1e-6 * (1 + std::fabs(want.o)) ? 1 : 0;
  }
  EXPECT_GT(wrong, 10);
}

}  // namespace
}  // namespace flashproof::algo
