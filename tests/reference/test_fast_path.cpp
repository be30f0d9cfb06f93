// The fast certified path against the MPFR path, its fallback, sampling and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "core/generators.h"
#include "reference/reference.h"

namespace flashproof::reference {
namespace {

struct Both {
  ForwardResult fwd;
  BackwardResult bwd;
};

Both run(const Problem& p, const Inputs& in, Options opt) {
  return {forward(p, in.q, in.k, in.v, opt), backward(p, in.q, in.k, in.v, in.dout, opt)};
}

void expect_agree(const char* what, const CertifiedTensor& a, const CertifiedTensor& b) {
  ASSERT_EQ(a.value.size(), b.value.size());
  for (std::size_t x = 0; x < a.value.size(); ++x) {
    if (!a.checked[x] || !b.checked[x]) continue;
    if (std::isinf(a.value[x]) || std::isinf(b.value[x])) {
      EXPECT_EQ(a.value[x], b.value[x]) << what << "[" << x << "]";
      continue;
    }
    EXPECT_LE(std::fabs(a.value[x] - b.value[x]), a.bound[x] + b.bound[x])
        << what << "[" << x << "] " << a.value[x] << " vs " << b.value[x];
  }
}

void expect_all_agree(const Both& a, const Both& b) {
  expect_agree("O", a.fwd.o, b.fwd.o);
  expect_agree("LSE", a.fwd.lse, b.fwd.lse);
  expect_agree("dQ", a.bwd.dq, b.bwd.dq);
  expect_agree("dK", a.bwd.dk, b.bwd.dk);
  expect_agree("dV", a.bwd.dv, b.bwd.dv);
}

struct FastCase {
  const char* name;
  DType dtype;
  std::int64_t hq, hkv, sq, sk, d, left, right;
  Distribution dist;
};

class FastAgreesWithMpfr : public ::testing::TestWithParam<FastCase> {};

TEST_P(FastAgreesWithMpfr, WithinTheirBounds) {
  const FastCase& c = GetParam();
  Problem p;
  p.dtype = c.dtype;
  p.batch = 2;
  p.heads_q = c.hq;
  p.heads_kv = c.hkv;
  p.seqlen_q = c.sq;
  p.seqlen_k = c.sk;
  p.head_dim = c.d;
  p.window_left = c.left;
  p.window_right = c.right;
  const Inputs in = generate_inputs(p, c.dist, 42);
  Options fast;
  Options exact;
  exact.backend = Backend::mpfr;
  const Both f = run(p, in, fast), m = run(p, in, exact);
  expect_all_agree(f, m);
}

using K = Distribution::Kind;
INSTANTIATE_TEST_SUITE_P(
    Cases, FastAgreesWithMpfr,
    ::testing::Values(
        FastCase{"normal_fp16", DType::fp16, 2, 2, 17, 17, 16, -1, -1, {K::normal}},
        FastCase{"gqa_causal_bf16", DType::bf16, 4, 2, 9, 13, 24, -1, 0, {K::scaled, 4}},
        FastCase{"mqa_causal_sq_gt_sk", DType::fp16, 3, 1, 13, 5, 8, -1, 0, {K::normal}},
        FastCase{"local_window", DType::fp16, 2, 1, 11, 11, 8, 3, 2, {K::uniform}},
        FastCase{"large_logits_1e4", DType::fp16, 2, 2, 8, 9, 32, -1, -1, {K::large_logits, 1e4}},
        FastCase{"large_logits_fp32", DType::fp32, 1, 1, 6, 7, 16, -1, -1, {K::large_logits, 1e6}},
        FastCase{"dominant_key", DType::bf16, 2, 2, 8, 16, 16, -1, -1, {K::dominant_key}},
        FastCase{"equal_rows", DType::fp16, 2, 1, 5, 8, 4, -1, -1, {K::equal_rows}},
        FastCase{"growing_max", DType::fp16, 1, 1, 4, 40, 8, -1, -1, {K::growing_max}},
        FastCase{"subnormal", DType::bf16, 1, 1, 5, 6, 8, -1, -1, {K::subnormal}},
        // Sums of more than 1023 terms are compensated, shorter ones plain (engine.h, plain_sum):
        // O and dQ over 1100 keys, dK and dV over 2 x 520 group rows.
        FastCase{"compensated_keys", DType::fp16, 1, 1, 3, 1100, 4, -1, -1, {K::normal}},
        FastCase{"compensated_group_rows", DType::bf16, 2, 1, 520, 3, 4, -1, -1, {K::normal}}),
    [](const auto& info) { return std::string(info.param.name); });

// On ordinary inputs the fast path certifies every element to 2^-40 of its magnitude by itself;
// if it did not, the benchmark's fast path would silently be the MPFR path. Relative to |value|
// alone, near-cancelling elements exceed it and go to MPFR, and still agree with it.
TEST(FastPath, CertifiesOrdinaryInputsWithoutFallback) {
  Problem p;
  p.batch = 1;
  p.heads_q = 2;
  p.heads_kv = 1;
  p.seqlen_q = 64;
  p.seqlen_k = 96;
  p.head_dim = 64;
  p.window_right = 0;
  const Inputs in = generate_inputs(p, Distribution{}, 1);
  const ForwardResult f = forward(p, in.q, in.k, in.v);
  const BackwardResult b = backward(p, in.q, in.k, in.v, in.dout);
  EXPECT_EQ(f.stats.fallback_rows, 0);
  EXPECT_EQ(b.stats.fallback_rows, 0);
  EXPECT_EQ(b.stats.fallback_columns, 0);
  for (std::size_t x = 0; x < f.o.value.size(); ++x)
    ASSERT_LE(f.o.bound[x], 0x1p-40 * f.o.magnitude[x]) << x;
  Options by_value;
  by_value.relative_to = Options::RelativeTo::value;
  const BackwardResult bv = backward(p, in.q, in.k, in.v, in.dout, by_value);
  EXPECT_GT(bv.stats.fallback_rows + bv.stats.fallback_columns, 0);
  for (std::size_t x = 0; x < bv.dq.value.size(); ++x) {
    ASSERT_LE(bv.dq.bound[x], std::max(0x1p-40 * std::fabs(bv.dq.value[x]), 1e-300)) << x;
    ASSERT_LE(std::fabs(bv.dq.value[x] - b.dq.value[x]), bv.dq.bound[x] + b.dq.bound[x]) << x;
  }
}

// Both kinds of sum meet the requirement by themselves: the plain ones (fewer than 1024 terms,
// gamma_{N+1} <= 2^-43) and the compensated ones beyond.
TEST(FastPath, PlainAndCompensatedSumsNeedNoFallback) {
  for (const auto& [sq, sk, hq] : {std::tuple{3, 1100, 1}, std::tuple{520, 3, 2}, std::tuple{40, 1023, 1}}) {
    Problem p;
    p.heads_q = hq;
    p.seqlen_q = sq;
    p.seqlen_k = sk;
    p.head_dim = 8;
    const Inputs in = generate_inputs(p, Distribution{}, 5);
    const Both b = run(p, in, Options{});
    EXPECT_EQ(b.fwd.stats.fallback_rows, 0) << sq << "x" << sk;
    EXPECT_EQ(b.bwd.stats.fallback_rows, 0) << sq << "x" << sk;
    EXPECT_EQ(b.bwd.stats.fallback_columns, 0) << sq << "x" << sk;
  }
}

// A requirement the double path cannot meet sends every row and column to MPFR, whose results
// then agree with the pure MPFR backend bit for bit.
TEST(FastPath, FallsBackToMpfrWhereTheBoundMissesTheRequirement) {
  Problem p;
  p.seqlen_q = 6;
  p.seqlen_k = 7;
  p.head_dim = 8;
  const Inputs in = generate_inputs(p, Distribution{}, 2);
  Options strict;
  strict.rel_requirement = 0x1p-80;
  Options exact;
  exact.backend = Backend::mpfr;
  const Both s = run(p, in, strict), m = run(p, in, exact);
  EXPECT_EQ(s.fwd.stats.fallback_rows, 6);
  EXPECT_EQ(s.bwd.stats.fallback_rows, 6);
  EXPECT_EQ(s.bwd.stats.fallback_columns, 7);
  EXPECT_EQ(s.fwd.o.value, m.fwd.o.value);
  EXPECT_EQ(s.bwd.dk.value, m.bwd.dk.value);
  EXPECT_EQ(s.bwd.dq.bound, m.bwd.dq.bound);
}

TEST(FastPath, ResultsDoNotDependOnTheThreadCount) {
  Problem p;
  p.batch = 2;
  p.heads_q = 2;
  p.seqlen_q = 150;  // more than one chunk of rows per head in the backward
  p.seqlen_k = 33;
  p.head_dim = 16;
  const Inputs in = generate_inputs(p, Distribution{}, 3);
  Options one, many;
  one.threads = 1;
  many.threads = 4;
  const Both a = run(p, in, one), b = run(p, in, many);
  EXPECT_EQ(a.fwd.o.value, b.fwd.o.value);
  EXPECT_EQ(a.fwd.lse.bound, b.fwd.lse.bound);
  EXPECT_EQ(a.bwd.dq.value, b.bwd.dq.value);
  EXPECT_EQ(a.bwd.dk.value, b.bwd.dk.value);
  EXPECT_EQ(a.bwd.dv.bound, b.bwd.dv.bound);
}

TEST(Sampling, ComputesExactlyTheSampledRowsAndColumns) {
  Problem p;
  p.batch = 2;
  p.heads_q = 2;
  p.seqlen_q = 20;
  p.seqlen_k = 30;
  p.head_dim = 8;
  const Inputs in = generate_inputs(p, Distribution{}, 4);
  Options all, some;
  some.sample = 5;
  some.sample_seed = 9;
  const Both full = run(p, in, all), part = run(p, in, some), again = run(p, in, some);
  EXPECT_EQ(part.fwd.lse.count_checked(), 5);
  EXPECT_EQ(part.fwd.o.count_checked(), 5 * p.head_dim);
  EXPECT_EQ(part.bwd.dq.count_checked(), 5 * p.head_dim);
  EXPECT_EQ(part.bwd.dk.count_checked(), 5 * p.head_dim);
  EXPECT_NE(part.fwd.stats.sampling.find("5 of 80 query rows"), std::string::npos);
  EXPECT_EQ(part.fwd.lse.checked, again.fwd.lse.checked);  // seeded
  for (std::size_t x = 0; x < full.fwd.o.value.size(); ++x)
    if (part.fwd.o.checked[x]) { EXPECT_EQ(part.fwd.o.value[x], full.fwd.o.value[x]); }
  for (std::size_t x = 0; x < full.bwd.dk.value.size(); ++x)
    if (part.bwd.dk.checked[x]) { EXPECT_EQ(part.bwd.dk.value[x], full.bwd.dk.value[x]); }
}

TEST(Reference, NonFiniteInputsGiveNoBoundInsteadOfAnAnswer) {
  Problem p;
  p.seqlen_q = 3;
  p.seqlen_k = 4;
  p.head_dim = 4;
  Inputs in = generate_inputs(p, Distribution{}, 5);
  in.k.set(0, 2, 0, 1, std::numeric_limits<double>::quiet_NaN());
  const ForwardResult f = forward(p, in.q, in.k, in.v);
  for (std::size_t x = 0; x < f.o.value.size(); ++x)
    EXPECT_TRUE(std::isnan(f.o.value[x]) || std::isinf(f.o.bound[x])) << x;
}

TEST(Reference, RejectsMismatchedShapesAndBadProblems) {
  Problem p;
  p.seqlen_q = 3;
  p.seqlen_k = 4;
  p.head_dim = 4;
  const Inputs in = generate_inputs(p, Distribution{}, 5);
  Problem other = p;
  other.seqlen_k = 5;
  EXPECT_THROW(forward(other, in.q, in.k, in.v), std::invalid_argument);
  other = p;
  other.heads_q = 3;
  other.heads_kv = 2;
  EXPECT_THROW(forward(other, in.q, in.k, in.v), std::invalid_argument);
  Options opt;
  opt.precision_bits = 10;
  EXPECT_THROW(forward(p, in.q, in.k, in.v, opt), std::invalid_argument);
}

}  // namespace
}  // namespace flashproof::reference
