#include "core/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <limits>
#include <vector>

namespace flashproof {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A [1, 1, rows, cols] tensor of dtype dt holding `v` row-major (rounded once).
HostTensor tensor(DType dt, std::int64_t rows, std::int64_t cols, const std::vector<double>& v) {
  HostTensor t(dt, {1, 1, rows, cols});
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) t.set(0, 0, i, j, v[i * cols + j]);
  return t;
}

ErrorMetrics cmp(const HostTensor& a, const std::vector<double>& r, CompareOptions o = {}) {
  return compare(a, {&r, nullptr}, o);
}

TEST(Metrics, ExactMatchIsZero) {
  const std::vector<double> r{1, -2, 0.5, 0};
  const ErrorMetrics m = cmp(tensor(DType::fp32, 2, 2, r), r);
  EXPECT_EQ(m.count, 4);
  EXPECT_EQ(m.max_abs, 0);
  EXPECT_EQ(m.max_rel, 0);
  EXPECT_EQ(m.normwise_rel, 0);
  EXPECT_EQ(m.max_ulps, 0);
  EXPECT_EQ(m.nan_mismatch + m.inf_mismatch + m.nonfinite_reference, 0);
  EXPECT_EQ(m.worst_index, 0);  // all errors 0: the first compared element
}

TEST(Metrics, AbsRelNormwiseAndWorst) {
  // actual - ref = {0, 0.5, -0.25, 1e-3}
  const std::vector<double> r{1, 2, 0.25, 0};
  const HostTensor a = tensor(DType::fp32, 2, 2, {1, 2.5, 0, 0.0009765625});
  const ErrorMetrics m = cmp(a, r, {.rel_floor = 0.5});
  EXPECT_EQ(m.max_abs, 0.5);
  EXPECT_EQ(m.worst_index, 1);
  EXPECT_EQ(m.worst_coord, (std::array<std::int64_t, 4>{0, 0, 0, 1}));
  EXPECT_EQ(m.worst_value, 2.5);
  EXPECT_EQ(m.worst_reference, 2);
  // rel: 0.5/2 = 0.25, 0.25/max(0.25, 0.5) = 0.5, 2^-10/0.5
  EXPECT_EQ(m.max_rel, 0.5);
  EXPECT_EQ(m.rel_floor, 0.5);
  const double e2 = 0.25 + 0.0625 + std::pow(2.0, -20), r2 = 1 + 4 + 0.0625;
  EXPECT_DOUBLE_EQ(m.normwise_rel, std::sqrt(e2) / std::sqrt(r2));
  // Without a floor the zero reference gives an infinite relative error ...
  EXPECT_EQ(cmp(a, r).max_rel, kInf);
  // ... and 0/0 is 0.
  EXPECT_EQ(cmp(tensor(DType::fp32, 1, 1, {0}), {0}).max_rel, 0);
}

TEST(Metrics, NormwiseWithZeroReference) {
  const std::vector<double> r{0, 0};
  EXPECT_DOUBLE_EQ(cmp(tensor(DType::fp32, 1, 2, {3, 4}), r, {.rel_floor = 0.5}).normwise_rel, 10);
  EXPECT_EQ(cmp(tensor(DType::fp32, 1, 2, {0, 0}), r).normwise_rel, 0);
  EXPECT_GT(cmp(tensor(DType::fp32, 1, 2, {3, 4}), r).normwise_rel, 1e300);
}

TEST(Metrics, Ulps) {
  // fp16 around 1: spacing 2^-10 above 1, 2^-11 below.
  const double u = std::ldexp(1.0, -10);
  EXPECT_EQ(cmp(tensor(DType::fp16, 1, 1, {1 + 3 * u}), {1}).max_ulps, 3);
  EXPECT_EQ(cmp(tensor(DType::fp16, 1, 1, {1 - u}), {1}).max_ulps, 2);
  // Across zero: min subnormal to -min subnormal is 2 ulps; +0 vs -0 is 0 ulps.
  const double tiny = std::ldexp(1.0, -24);
  EXPECT_EQ(cmp(tensor(DType::fp16, 1, 1, {tiny}), {-tiny}).max_ulps, 2);
  const ErrorMetrics z = cmp(tensor(DType::fp16, 1, 1, {-0.0}), {0.0});
  EXPECT_EQ(z.max_ulps, 0);
  EXPECT_EQ(z.max_abs, 0);
  // The reference is correctly rounded to the ulp dtype first: 1 + 0.4u rounds to 1.
  EXPECT_EQ(cmp(tensor(DType::fp16, 1, 1, {1}), {1 + 0.4 * u}).max_ulps, 0);
  EXPECT_EQ(cmp(tensor(DType::fp16, 1, 1, {1}), {1 + 0.6 * u}).max_ulps, 1);
  // An fp32 actual measured in bf16 ulps is rounded to bf16 first.
  const HostTensor a32 = tensor(DType::fp32, 1, 1, {1 + std::ldexp(1.0, -7)});
  EXPECT_EQ(cmp(a32, {1}, {.ulp_dtype = DType::bf16}).max_ulps, 1);
  EXPECT_EQ(cmp(a32, {1}).max_ulps, 1 << 16);
}

// The value of ordered index i in dtype t (finite: |i| at most the largest finite's index).
double value_at(DType t, std::int64_t i) {
  const std::uint32_t sign = t == DType::fp32 ? 0x80000000u : 0x8000u;
  return from_bits(t, i >= 0 ? static_cast<std::uint32_t>(i) : sign | static_cast<std::uint32_t>(-i));
}

// compare counts ULPs exactly only where a cheap bound cannot rule out a new maximum (metrics.cpp,
// ulp_bound); the maximum must still be the exact one wherever the pairs lie: across binade edges,
// across zero, in the subnormals, at the end of the range, with a narrower ULP dtype, and with the
// largest distance anywhere in the tensor.
TEST(Metrics, UlpMaximumIsExactWhereverItLies) {
  std::mt19937_64 rng(7);
  auto below = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)); };
  auto unit = [&] { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  for (int trial = 0; trial < 600; ++trial) {
    const DType t = std::array{DType::fp16, DType::bf16, DType::fp32}[trial % 3];
    const DType u = t != DType::fp32 || trial % 2 == 0 ? t : (trial % 4 == 1 ? DType::bf16 : DType::fp16);
    const int mant = dtype_mantissa_bits(u);
    const std::int64_t top = ordered_index(u, to_bits(u, 0x1p200)) - 1;  // the largest finite
    const std::int64_t binade = std::int64_t{1} << mant;
    const std::int64_t centers[] = {0, binade, binade * (1 + below(top / binade - 1)), top - 30, below(2 * top) - top};
    const std::int64_t center = centers[trial / 3 % 5];
    const int n = 12;
    std::vector<double> a(n), r(n);
    std::int64_t expected = 0;
    HostTensor actual(t, {1, 1, 1, n});
    for (int k = 0; k < n; ++k) {
      auto clamp = [&](std::int64_t i) { return std::clamp<std::int64_t>(i, -top + 1, top); };
      const std::int64_t ia = clamp(center + below(101) - 50), ir = clamp(ia + below(81) - 40);
      // Between two values of u (a narrower ULP dtype); past its largest finite value at top.
      auto after = [&](std::int64_t i) { return i < top ? value_at(u, i + 1) : 2 * value_at(u, top) - value_at(u, top - 1); };
      double av = value_at(u, ia);
      if (u != t) av += unit() * (after(ia) - av);
      actual.set(0, 0, 0, k, av);
      a[k] = actual.get(0, 0, 0, k);
      r[k] = value_at(u, ir) + unit() * (after(ir) - value_at(u, ir));
      const std::int64_t d = std::llabs(ordered_index(u, to_bits(u, a[k])) - ordered_index(u, to_bits(u, r[k])));
      expected = std::max(expected, a[k] == r[k] ? 0 : d);
    }
    const ErrorMetrics m = cmp(actual, r, {.ulp_dtype = u});
    ASSERT_EQ(m.max_ulps, static_cast<double>(expected))
        << "trial " << trial << " " << dtype_name(t) << " in " << dtype_name(u) << " ulps, center " << center;
  }
}

// ULPs against a reference with a bound: the correctly rounded exact value is only known to lie
// between round(r - bound) and round(r + bound). The exact value near 2^-20 certified to 2^-40 of a
// magnitude near 1 (a cancelling sum) spans thousands of fp16 steps: its correct rounding read as
// 18,384 ULPs off. There no count is meaningful; where the range is tight, the distance to it is.
TEST(Metrics, UlpsOnlyWhereTheReferenceSettlesTheRounding) {
  const std::vector<double> r{0x1p-20 + 0x1p-45, 1.0 + 0x1p-30, 1.0 + 0x1p-30};
  const std::vector<double> bound{0x1p-40 * 0.9, 0x1p-40, 0x1p-40};
  const HostTensor a = tensor(DType::fp16, 1, 3, {0x1p-20, 1.0, 1.0 + 3 * 0x1p-10});
  const ErrorMetrics m = compare(a, {&r, &bound});
  EXPECT_EQ(m.ulps_unknown, 0);  // 2^-40 is far below fp16's step at 2^-20 (2^-24 subnormal step)
  EXPECT_EQ(m.max_ulps, 3);
  // The same elements with a bound of 2^-20: the first spans many subnormal steps (unknown); the
  // others still settle (2^-20 is below half a step at 1).
  const std::vector<double> loose{0x1p-20, 0x1p-20, 0x1p-20};
  const ErrorMetrics l = compare(a, {&r, &loose});
  EXPECT_EQ(l.ulps_unknown, 1);
  EXPECT_EQ(l.max_ulps, 3);
  // The exact value lies in [1 + 2^-12, 1 + 3 2^-12]: it may round to 1 + 2^-10, which is then 0 ulps off.
  const std::vector<double> r2{1.0 + 0x1p-11, 2.0};
  const std::vector<double> b2{0x1p-12, 0};
  EXPECT_EQ(compare(tensor(DType::fp16, 1, 2, {1.0 + 0x1p-10, 2.0}), {&r2, &b2}).max_ulps, 0);
  // Without a bound r is taken as exact: it rounds (ties to even) to 1, one step from the value.
  EXPECT_EQ(compare(tensor(DType::fp16, 1, 2, {1.0 + 0x1p-10, 2.0}), {&r2, nullptr}).max_ulps, 1);
}

TEST(Metrics, NanAndInfMismatchesAreNeverSmall) {
  const std::vector<double> r{1, 2, kInf, -kInf, kInf, 5};
  const HostTensor a = tensor(DType::fp32, 2, 3, {kNaN, kInf, kInf, kInf, 7, 5});
  const std::vector<double> tol(6, 1e30);
  const ErrorMetrics m = cmp(a, r, {.tolerance = &tol});
  EXPECT_EQ(m.nan_mismatch, 1);
  EXPECT_EQ(m.inf_mismatch, 3);  // inf vs 2, +inf vs -inf, 7 vs +inf
  EXPECT_EQ(m.first_mismatch_index, 0);
  EXPECT_EQ(m.above_bound, 4);  // mismatches exceed any tolerance
  EXPECT_EQ(m.max_abs, 0);      // excluded from the finite metrics (matching +inf is exact)
  EXPECT_EQ(m.nonfinite_reference, 0);
  EXPECT_EQ(m.count, 6);
}

TEST(Metrics, NanReferenceIsCounted) {
  const ErrorMetrics m = cmp(tensor(DType::fp32, 1, 3, {kNaN, 1, 2}), {kNaN, kNaN, 2});
  EXPECT_EQ(m.nonfinite_reference, 2);
  EXPECT_EQ(m.nan_mismatch, 1);  // 1 vs NaN reference
  EXPECT_EQ(m.max_abs, 0);
}

TEST(Metrics, ToleranceAndReferenceBound) {
  const std::vector<double> r{1, 1, 1};
  const std::vector<double> bound{0, 0.1, 0.5};
  const std::vector<double> tol{0.2, 0.2, 0.2};
  const HostTensor a = tensor(DType::fp32, 1, 3, {1.25, 1.25, 1.5});
  // errors 0.25, 0.25, 0.5; minus the bound: 0.25 (above), 0.15, 0.0
  const ErrorMetrics m = compare(a, {&r, &bound}, {.tolerance = &tol});
  EXPECT_EQ(m.above_bound, 1);
  EXPECT_EQ(m.max_reference_bound, 0.5);
  EXPECT_EQ(m.loose_reference, 2);  // 0.1 and 0.5 exceed 0.2 / 8
}

TEST(Metrics, SampledSubsetAndStridedActual) {
  const std::vector<double> r{1, 2, 3, 4, 5, 6};
  // Storage holds the transpose; the [1,1,2,3] view reads it back in logical order.
  HostTensor store = tensor(DType::fp32, 3, 2, {1, 40, 2, 5, 3, 6});
  const HostTensor a = store.view({1, 1, 2, 3}, {6, 6, 1, 2}, 0);
  const ErrorMetrics all = cmp(a, r);
  EXPECT_EQ(all.max_abs, 36);
  EXPECT_EQ(all.worst_index, 3);
  EXPECT_EQ(all.worst_coord, (std::array<std::int64_t, 4>{0, 0, 1, 0}));
  const std::vector<std::uint8_t> checked{1, 1, 1, 0, 1, 1};
  const ErrorMetrics part = cmp(a, r, {.checked = &checked});
  EXPECT_EQ(part.count, 5);
  EXPECT_EQ(part.max_abs, 0);
  const std::vector<std::uint8_t> none(6, 0);
  const ErrorMetrics empty = cmp(a, r, {.checked = &none});
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.worst_index, -1);
}

TEST(Metrics, RejectsBadLengths) {
  const HostTensor a = tensor(DType::fp32, 1, 2, {1, 2});
  const std::vector<double> r3{1, 2, 3}, r2{1, 2};
  EXPECT_THROW(cmp(a, r3), std::invalid_argument);
  EXPECT_THROW(compare(a, {nullptr, nullptr}), std::invalid_argument);
  EXPECT_THROW(compare(a, {&r2, &r3}), std::invalid_argument);
  const std::vector<std::uint8_t> m1{1};
  EXPECT_THROW(cmp(a, r2, {.checked = &m1}), std::invalid_argument);
}

// Deliberately wrong: one element one ulp off must move every metric.
TEST(Metrics, OneUlpPerturbationIsSeen) {
  for (DType dt : {DType::fp16, DType::bf16, DType::fp32}) {
    std::vector<double> r;
    for (int i = 0; i < 12; ++i) r.push_back(round_to(dt, 0.1 * (i + 1)));
    HostTensor a = tensor(dt, 3, 4, r);
    const std::vector<double> tol(12, 0);
    const ErrorMetrics ok = cmp(a, r, {.tolerance = &tol});
    EXPECT_EQ(ok.max_ulps, 0);
    a.set_bits(0, 0, 1, 2, a.bits(0, 0, 1, 2) + 1);  // element 6, one ulp up
    const ErrorMetrics m = cmp(a, r, {.tolerance = &tol});
    EXPECT_EQ(m.max_ulps, 1) << dtype_name(dt);
    EXPECT_GT(m.max_abs, 0);
    EXPECT_GT(m.max_rel, 0);
    EXPECT_GT(m.normwise_rel, 0);
    EXPECT_EQ(m.worst_index, 6);
    EXPECT_EQ(m.above_bound, 1);
    EXPECT_NEAR(m.max_rel, unit_roundoff(dt), 2 * unit_roundoff(dt));
  }
}

TEST(Metrics, FormatIsOneLine) {
  const std::string s = format_metrics(cmp(tensor(DType::fp16, 1, 2, {1, 2}), {1, 2.5}));
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_NE(s.find("max_abs=0.5"), std::string::npos) << s;
  EXPECT_NE(s.find("n=2"), std::string::npos) << s;
}

}  // namespace
}  // namespace flashproof
