// The naive baseline against the reference: close for fp32 (where it only rounds in fp32), exact
// empty-row semantics, strides honoured, GQA gradients summed over the group.
#include <gtest/gtest.h>

#include <cmath>

#include "core/generators.h"
#include "kernels/naive/naive_attention.h"
#include "reference/reference.h"

namespace flashproof {
namespace {

struct Out {
  HostTensor o, lse, dq, dk, dv;
};

Out run(AttentionImpl& impl, const Problem& p, const Inputs& in) {
  Out r{HostTensor(p.dtype, p.q_shape()), HostTensor(DType::fp32, p.lse_shape(), 3),
        HostTensor(p.dtype, p.q_shape()), HostTensor(p.dtype, p.kv_shape()),
        HostTensor(p.dtype, p.kv_shape())};
  impl.forward(p, {in.q, in.k, in.v, r.o, r.lse});
  impl.backward(p, {in.q, in.k, in.v, r.o, r.lse, in.dout, r.dq, r.dk, r.dv});
  return r;
}

double max_error(const HostTensor& t, const reference::CertifiedTensor& ref) {
  double m = 0;
  const Shape& s = t.shape();
  std::size_t x = 0;
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d, ++x) {
          const double v = t.get(a, b, c, d), r = ref.value[x];
          if (std::isinf(r) && v == r) continue;
          m = std::max(m, std::fabs(v - r) / std::max(1.0, ref.magnitude[x]));
        }
  return m;
}

Problem gqa_causal(DType t) {
  Problem p;
  p.dtype = t;
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seqlen_q = 11;
  p.seqlen_k = 7;  // causal with sq > sk: rows 0..3 see nothing
  p.head_dim = 12;
  p.window_right = 0;
  return p;
}

TEST(Naive, Fp32IsCloseToTheReference) {
  const Problem p = gqa_causal(DType::fp32);
  const Inputs in = generate_inputs(p, Distribution{}, 8);
  auto naive = make_naive_attention();
  const Out out = run(*naive, p, in);
  const auto f = reference::forward(p, in.q, in.k, in.v);
  const auto b = reference::backward(p, in.q, in.k, in.v, in.dout);
  // fp32 arithmetic over a dozen terms: a few hundred units of 2^-24 relative to the magnitude.
  EXPECT_LT(max_error(out.o, f.o), 1e-5);
  EXPECT_LT(max_error(out.lse, f.lse), 1e-5);
  EXPECT_LT(max_error(out.dq, b.dq), 1e-5);
  EXPECT_LT(max_error(out.dk, b.dk), 1e-5);
  EXPECT_LT(max_error(out.dv, b.dv), 1e-5);
}

TEST(Naive, EmptyRowsGiveZeroOutputInfiniteLseAndZeroGradients) {
  const Problem p = gqa_causal(DType::fp16);
  const Inputs in = generate_inputs(p, Distribution{}, 9);
  auto naive = make_naive_attention();
  const Out out = run(*naive, p, in);
  for (std::int64_t h = 0; h < p.heads_q; ++h)
    for (std::int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(out.lse.get(1, h, i), std::numeric_limits<double>::infinity());
      for (std::int64_t c = 0; c < p.head_dim; ++c) {
        EXPECT_EQ(out.o.get(1, i, h, c), 0.0);
        EXPECT_EQ(out.dq.get(1, i, h, c), 0.0);
      }
    }
}

TEST(Naive, StridedViewsGiveBitwiseTheSameResults) {
  Problem p = gqa_causal(DType::bf16);
  p.heads_q = p.heads_kv = 2;
  const Inputs dense = generate_inputs(p, Distribution{}, 10);
  // Q, K, V as slices of one packed [b, s, 3, h, d] tensor (seqlen_q != seqlen_k, so the packed
  // tensor has seqlen max(sq, sk) and each view uses a prefix).
  const std::int64_t s = std::max(p.seqlen_q, p.seqlen_k), h = p.heads_q, d = p.head_dim;
  HostTensor packed(p.dtype, {p.batch, s, 3 * h, d});
  const Shape strides{s * 3 * h * d, 3 * h * d, d, 1};
  Inputs views{packed.view(p.q_shape(), strides, 0), packed.view(p.kv_shape(), strides, h * d),
               packed.view(p.kv_shape(), strides, 2 * h * d), dense.dout};
  fill_inputs(p, Distribution{}, 10, views);
  auto naive = make_naive_attention();
  const Out a = run(*naive, p, dense), b = run(*naive, p, views);
  for (std::int64_t x = 0; x < a.o.storage_elements(); ++x) ASSERT_EQ(a.o.raw_bits(x), b.o.raw_bits(x));
  for (std::int64_t x = 0; x < a.dk.storage_elements(); ++x) ASSERT_EQ(a.dk.raw_bits(x), b.dk.raw_bits(x));
}

TEST(Naive, GqaGradientsSumOverTheGroup) {
  // heads_q = 2 over one kv head equals two single-head problems whose dK/dV add up.
  Problem p;
  p.dtype = DType::fp32;
  p.heads_q = 2;
  p.heads_kv = 1;
  p.seqlen_q = 5;
  p.seqlen_k = 6;
  p.head_dim = 4;
  const Inputs in = generate_inputs(p, Distribution{}, 12);
  auto naive = make_naive_attention();
  const Out both = run(*naive, p, in);
  Problem single = p;
  single.heads_q = 1;
  double dk_sum[6 * 4] = {};
  for (std::int64_t h = 0; h < 2; ++h) {
    Inputs one{in.q.view(single.q_shape(), in.q.strides(), h * p.head_dim), in.k, in.v,
               in.dout.view(single.q_shape(), in.dout.strides(), h * p.head_dim)};
    const Out o = run(*naive, single, one);
    for (std::int64_t j = 0; j < 6; ++j)
      for (std::int64_t c = 0; c < 4; ++c) dk_sum[j * 4 + c] += o.dk.get(0, j, 0, c);
  }
  for (std::int64_t j = 0; j < 6; ++j)
    for (std::int64_t c = 0; c < 4; ++c)
      EXPECT_NEAR(both.dk.get(0, j, 0, c), dk_sum[j * 4 + c], 1e-5 * (1 + std::fabs(dk_sum[j * 4 + c])));
}

}  // namespace
}  // namespace flashproof
