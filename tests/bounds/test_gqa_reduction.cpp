// GQA gradients reduced per query head (core/attention_impl.h, GqaGradientReduction): K and V
// repeated per query head, each head's dK and dV rounded to the dtype, then summed in fp32 and
// rounded again, as PyTorch's enable_gqa path does: one rounding per head more than the kernels'
// fp32 group sum, which the bound it declares allows for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "bounds/implementation_bounds.h"
#include "harness/check.h"
#include "harness/check_render.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

class PerHeadGqa final : public AttentionImpl {
 public:
  explicit PerHeadGqa(GqaGradientReduction declared) : declared_(declared) {}
  std::string name() const override { return "naive-per-head-gqa"; }
  std::string description() const override { return "naive on K, V repeated per query head"; }
  std::string where() const override { return "host"; }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  GqaGradientReduction gqa_gradient_reduction() const override { return declared_; }
  std::string unsupported_reason(const Problem& p, bool) const override { return p.validate(); }
  void forward(const Problem& p, const ForwardArgs& a) override {
    const Problem mha = expanded(p);
    const HostTensor k = repeat(p, a.k), v = repeat(p, a.v);
    base().forward(mha, ForwardArgs{a.q, k, v, a.o, a.lse});
  }
  void backward(const Problem& p, const BackwardArgs& a) override {
    const Problem mha = expanded(p);
    const HostTensor k = repeat(p, a.k), v = repeat(p, a.v);
    HostTensor dk(p.dtype, mha.kv_shape()), dv(p.dtype, mha.kv_shape());
    base().backward(mha, BackwardArgs{a.q, k, v, a.o, a.lse, a.dout, a.dq, dk, dv});
    reduce(p, dk, a.dk);
    reduce(p, dv, a.dv);
  }

 private:
  static AttentionImpl& base() { return *find_implementation("naive"); }
  static Problem expanded(const Problem& p) {
    Problem mha = p;
    mha.heads_kv = p.heads_q;
    return mha;
  }
  static HostTensor repeat(const Problem& p, const HostTensor& kv) {
    HostTensor out(p.dtype, expanded(p).kv_shape());
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t j = 0; j < p.seqlen_k; ++j)
        for (std::int64_t h = 0; h < p.heads_q; ++h)
          for (std::int64_t c = 0; c < p.head_dim; ++c) out.set(b, j, h, c, kv.get(b, j, p.kv_head(h), c));
    return out;
  }
  // The per-head gradients (each already rounded to the dtype) summed in fp32, rounded once.
  static void reduce(const Problem& p, const HostTensor& per_head, HostTensor& out) {
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t j = 0; j < p.seqlen_k; ++j)
        for (std::int64_t hk = 0; hk < p.heads_kv; ++hk)
          for (std::int64_t c = 0; c < p.head_dim; ++c) {
            float sum = 0;
            for (std::int64_t h = hk * p.group_size(); h < (hk + 1) * p.group_size(); ++h)
              sum += static_cast<float>(per_head.get(b, j, h, c));
            out.set(b, j, hk, c, sum);
          }
  }
  GqaGradientReduction declared_;
};

Case gqa_case(std::uint64_t seed) {
  Case c;
  c.impl = "naive-per-head-gqa";
  c.backward = true;
  c.problem.dtype = DType::bf16;
  c.problem.heads_q = 16;
  c.problem.heads_kv = 1;
  c.problem.seqlen_q = 3;
  c.problem.seqlen_k = 5;
  c.problem.head_dim = 16;
  c.seed = seed;
  return c;
}

double worst_kv_ratio(const CheckRecord& r) {
  double worst = 0;
  for (const TensorCheck& t : r.tensors)
    if (t.name == "dK" || t.name == "dV") worst = std::max(worst, t.bound_ratio);
  return worst;
}

// Generated cases: the per-head implementation passes under the bound it declares.
TEST(GqaReduction, PerHeadRoundingPassesUnderItsDeclaredBound) {
  PerHeadGqa declared(GqaGradientReduction::per_head_rounded);
  double worst = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const CheckRecord r = run_check(gqa_case(seed), declared);
    EXPECT_EQ(r.verdict, Verdict::pass) << seed << "\n" << to_table(r);
    worst = std::max(worst, worst_kv_ratio(r));
  }
  EXPECT_GT(worst, 0.05) << "the per-head bound is meant to stay tight";
}

// One key (P = 1 exactly), two query heads of one kv head, two rows each: dV_h = dO_0h + dO_1h is
// a bf16 tie that rounds to even (down) in both heads, and so is their sum, 4 + 2^-6: the per-head
// result 4 is 0.0273 from the exact 4.02734375, 1.7 u_h times the magnitude. The per-head bound
// holds it. The group-sum bound holds it too, but only through its allowance for P's rounding
// (u_h per weight, unused where P = 1 exactly): 87% of it is used. The 2.7x that an outside check
// saw with PyTorch's enable_gqa kernels has not been reproduced on the host.
TEST(GqaReduction, AlignedTiesStayWithinThePerHeadBound) {
  Problem p;
  p.dtype = DType::bf16;
  p.heads_q = 2, p.heads_kv = 1, p.seqlen_q = 2, p.seqlen_k = 1, p.head_dim = 8;
  Inputs in{HostTensor(p.dtype, p.q_shape()), HostTensor(p.dtype, p.kv_shape()), HostTensor(p.dtype, p.kv_shape()),
            HostTensor(p.dtype, p.q_shape())};
  const double dout[2][2] = {{1.515625, 0.7109375}, {0.9765625, 0.82421875}};  // [head][row]
  for (std::int64_t c = 0; c < p.head_dim; ++c) {
    in.k.set(0, 0, 0, c, 0.5), in.v.set(0, 0, 0, c, 1.0);
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 2; ++i) in.q.set(0, i, h, c, 0.25), in.dout.set(0, i, h, c, dout[h][i]);
  }
  PerHeadGqa impl(GqaGradientReduction::per_head_rounded);
  const Outputs out = run_implementation(impl, p, true, in);
  const double exact = 1.515625 + 0.7109375 + 0.9765625 + 0.82421875;
  const double error = std::fabs(out.dv.get(0, 0, 0, 0) - exact);
  ASSERT_EQ(out.dv.get(0, 0, 0, 0), 4.0);
  const auto bound = [&](GqaGradientReduction r) {
    return bounds::implementation_bounds(p, in, ArithmeticModel::naive, true, 0, nullptr, r).dv[0];
  };
  EXPECT_GT(error, 0.8 * bound(GqaGradientReduction::group_sum));
  EXPECT_LE(error, bound(GqaGradientReduction::per_head_rounded));
  EXPECT_GE(bound(GqaGradientReduction::per_head_rounded) - bound(GqaGradientReduction::group_sum), 0x1p-8 * exact)
      << "the per-head bound adds a rounding of each head's share";
}

}  // namespace
}  // namespace flashproof
