// The reference through the soft cap and ALiBi (docs/spec.md "Soft cap and ALiBi"): against a
// hand computation in long double, a cap of 2^100 against no cap, and the multiple-precision path
// against the fast one; each comparison with a twin that must fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/generators.h"
#include "reference/reference.h"

namespace flashproof {
namespace {

// Elements of a and b apart by more than their two bounds (plus `slack` of their size).
std::int64_t disagreements(const reference::CertifiedTensor& a, const reference::CertifiedTensor& b, double slack = 0) {
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < a.value.size(); ++i) {
    const double x = a.value[i], y = b.value[i];
    if (x == y) continue;
    if (!(std::fabs(x - y) <= a.bound[i] + b.bound[i] + slack * (std::fabs(x) + std::fabs(y)))) ++bad;
  }
  return bad;
}

std::int64_t all_disagreements(const reference::Results& a, const reference::Results& b, double slack = 0) {
  return disagreements(a.forward.o, b.forward.o, slack) + disagreements(a.forward.lse, b.forward.lse, slack) +
         disagreements(a.backward->dq, b.backward->dq, slack) + disagreements(a.backward->dk, b.backward->dk, slack) +
         disagreements(a.backward->dv, b.backward->dv, slack);
}

reference::Results run(const Problem& p, const Inputs& in, reference::Options opt = {}) {
  return reference::forward_backward(p, in.q, in.k, in.v, &in.dout, opt);
}

// One row, head dim 1, three keys (offset sk - sq = 2): O, LSE and dQ from the definition, in long
// double, and the reference within its bound of them (and not of the twin's dQ).
TEST(ScoreModReference, MatchesTheDefinitionByHand) {
  Problem p;
  p.dtype = DType::fp32, p.head_dim = 1, p.seqlen_q = 1, p.seqlen_k = 3, p.scale = 0.75f;
  p.softcap = 2.5f;
  p.alibi_slopes = {0.375f};
  const double q = 3, k[3] = {2, -1, 4}, v[3] = {1.5, -2, 0.25}, dout = 0.5;
  Inputs in{HostTensor(p.dtype, p.q_shape()), HostTensor(p.dtype, p.kv_shape()), HostTensor(p.dtype, p.kv_shape()),
            HostTensor(p.dtype, p.q_shape())};
  in.q.set(0, 0, 0, 0, q), in.dout.set(0, 0, 0, 0, dout);
  for (int j = 0; j < 3; ++j) in.k.set(0, j, 0, 0, k[j]), in.v.set(0, j, 0, 0, v[j]);
  long double y[3], g[3], w[3], l = 0;
  for (int j = 0; j < 3; ++j) {
    const long double s = 0.75L * q * k[j], c = 2.5L;
    y[j] = c * std::tanh(s / c) - 0.375L * std::fabs(0.0L + 2 - j);
    g[j] = 1 - std::tanh(s / c) * std::tanh(s / c);
  }
  for (int j = 0; j < 3; ++j) l += w[j] = std::exp(y[j]);
  long double o = 0, d = 0, dq = 0, dq_twin = 0;
  for (int j = 0; j < 3; ++j) o += w[j] / l * v[j];
  for (int j = 0; j < 3; ++j) d += w[j] / l * dout * v[j];
  for (int j = 0; j < 3; ++j) {
    const long double ds = w[j] / l * (dout * v[j] - d);
    dq += 0.75L * ds * g[j] * k[j], dq_twin += 0.75L * ds * k[j];
  }
  const reference::Results r = run(p, in);
  const auto near = [](double got, double bound, long double want) {
    return std::fabs(static_cast<long double>(got) - want) <= bound + 1e-15L * std::fabs(want);
  };
  EXPECT_TRUE(near(r.forward.o.value[0], r.forward.o.bound[0], o)) << r.forward.o.value[0] << " vs " << double(o);
  EXPECT_TRUE(near(r.forward.lse.value[0], r.forward.lse.bound[0], std::log(l)));
  EXPECT_TRUE(near(r.backward->dq.value[0], r.backward->dq.bound[0], dq)) << r.backward->dq.value[0] << " vs " << double(dq);
  // The twin: dS left without the cap's derivative.
  reference::Options twin;
  twin.mutation = reference::Mutation::softcap_derivative_dropped;
  const reference::Results t = run(p, in, twin);
  EXPECT_FALSE(near(t.backward->dq.value[0], t.backward->dq.bound[0], dq));
  EXPECT_TRUE(near(t.backward->dq.value[0], t.backward->dq.bound[0], dq_twin));
}

Problem base_problem() {
  Problem p;
  p.dtype = DType::bf16, p.heads_q = 4, p.heads_kv = 2, p.head_dim = 24, p.seqlen_q = 19, p.seqlen_k = 33;
  p.window_left = -1, p.window_right = 0;
  return p;
}

// A cap of 2^100 is no cap: logits of normal inputs (below 2^10) move by less than 2^-170.
TEST(ScoreModReference, AHugeCapIsNoCap) {
  Problem p = base_problem();
  p.alibi_slopes = standard_alibi_slopes(p.heads_q);
  const Inputs in = generate_inputs(p, *parse_distribution("normal"), 3);
  Problem capped = p;
  capped.softcap = 0x1p100f;
  EXPECT_EQ(all_disagreements(run(p, in), run(capped, in), 0x1p-100), 0);
  // The twin: a cap of 2 changes the results far beyond the bounds.
  capped.softcap = 2.0f;
  EXPECT_GT(all_disagreements(run(p, in), run(capped, in), 0x1p-100), 100);
}

// Slopes of 0 are no ALiBi, exactly.
TEST(ScoreModReference, ZeroSlopesAreNoAlibi) {
  Problem p = base_problem();
  p.softcap = 7.5f;
  const Inputs in = generate_inputs(p, *parse_distribution("scaled:4"), 4);
  Problem zero = p;
  zero.alibi_slopes.assign(static_cast<std::size_t>(p.heads_q), 0.0f);
  EXPECT_EQ(all_disagreements(run(p, in), run(zero, in)), 0);
}

// The multiple-precision path certifies the same values as the fast one, packed and GQA included;
// the twin aligns ALiBi's distance top-left (sq != sk) and disagrees.
TEST(ScoreModReference, MultiplePrecisionAgreesWithTheFastPath) {
  Problem p = base_problem();
  p.cu_seqlens_q = {0, 5, 6, 19};
  p.cu_seqlens_k = {0, 9, 9, 33};
  p.softcap = 3.0f;
  p.alibi_slopes = {0.5f, -0.0625f, 2.0f, 0x1p-12f};
  const Inputs in = generate_inputs(p, *parse_distribution("large-logits:30"), 5);
  reference::Options mpfr;
  mpfr.backend = reference::Backend::mpfr;
  const reference::Results fast = run(p, in), precise = run(p, in, mpfr);
  EXPECT_EQ(all_disagreements(fast, precise), 0);
  reference::Options twin = mpfr;
  twin.mutation = reference::Mutation::causal_top_left;
  p.window_right = -1;  // no mask: only ALiBi's alignment differs
  EXPECT_GT(all_disagreements(run(p, in), run(p, in, twin)), 0);
}

}  // namespace
}  // namespace flashproof
