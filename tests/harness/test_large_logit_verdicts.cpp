// Verdicts at large logits, where the arithmetic model's finite bounds grow to the size of the
// values they bound (issue: verdicts as sharp at extreme logits as in the middle). Every element is
// held to its bound-free envelope beside rule 2, and a tensor whose bound admits 0 and twice the
// answer is not judged, never pass.
#include <gtest/gtest.h>

#include <cmath>

#include "bounds/envelope.h"
#include "harness/check.h"
#include "harness/check_render.h"
#include "harness/sample_plan.h"
#include "kernels/registry.h"
#include "tests/harness/broken_impl.h"
#include "tests/harness/record_tensor.h"

namespace flashproof {
namespace {

using bounds::bound_free_envelopes;
using bounds::Envelopes;
using test_impls::tensor;

// Every finite element of a tensor mapped by f.
template <class F>
void map(HostTensor& t, F f) {
  const Shape& s = t.shape();
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d) t.set(a, b, c, d, f(t.get(a, b, c, d)));
}

// bf16, logits near 3e5: the flash model's O bound (about 7) is wider than the hull of V's rows,
// and its dV bound is about the size of dV. The naive implementation is judged by the flash model,
// as an FA-style kernel would be.
Case large_logit_case(const std::string& impl) {
  Case c;
  c.impl = impl;
  c.backward = true;
  c.problem.dtype = DType::bf16;
  c.problem.seqlen_q = 64;
  c.problem.seqlen_k = 64;
  c.problem.head_dim = 64;
  c.dist = *parse_distribution("large-logits:3e5");
  c.seed = 1;
  return c;
}

void register_large_logit_impls() {
  using test_impls::register_broken;
  const auto flash = ArithmeticModel::flash;
  register_broken("ll-honest", "naive", flash, {});
  register_broken("ll-o-times-1.5", "naive", flash, [](const Problem&, ForwardArgs& a) {
    map(a.o, [](double x) { return 1.5 * x; });
  });
  register_broken("ll-dv-zero", "naive", flash, {}, [](const Problem&, BackwardArgs& a) {
    map(a.dv, [](double) { return 0.0; });
  });
  register_broken("ll-dv-times-2", "naive", flash, {}, [](const Problem&, BackwardArgs& a) {
    map(a.dv, [](double x) { return 2 * x; });
  });
  register_broken("ll-dv-times-8", "naive", flash, {}, [](const Problem&, BackwardArgs& a) {
    map(a.dv, [](double x) { return 8 * x; });
  });
}

// dQ set to half the flash model's bound of the case (rigorous_bounds, computed from the inputs).
void register_broken_half_bound_dq() {
  test_impls::register_broken("ll-dq-half-bound", "naive", ArithmeticModel::flash, {},
                              [](const Problem& p, BackwardArgs& a) {
                                Case c = large_logit_case("ll-honest");
                                c.dist = *parse_distribution("large-logits:1e15");
                                const bounds::ImplementationBounds b = rigorous_bounds(c, ArithmeticModel::flash);
                                std::size_t x = 0;
                                map(a.dq, [&](double) { return 0.5 * b.dq[x++]; });
                                (void)p;
                              });
}

// Before: O x 1.5 passed (every O element has a finite bound, so the envelope was not consulted).
// Since docs/error-bounds.md (F5') O's bound is tight here too (the top key carries each row), so
// both rules fail it; NotJudged.* shows the envelope failing alone where no bound judges.
TEST(LargeLogitVerdicts, OutputOutsideTheHullOfVFails) {
  register_large_logit_impls();
  const CheckRecord r = run_check(large_logit_case("ll-o-times-1.5"));
  const TensorCheck& o = tensor(r, "O");
  EXPECT_EQ(o.verdict, Verdict::fail) << to_table(r);
  EXPECT_GT(o.outside_envelope, 0);
  EXPECT_GT(o.above_rigorous_bound, 0);
  ASSERT_FALSE(o.reasons.empty());
  EXPECT_NE(o.reasons.front().find("hull of the visible V rows"), std::string::npos) << o.reasons.front();
  EXPECT_NE(to_json(r).find("\"outside_envelope\": " + std::to_string(o.outside_envelope)), std::string::npos);
}

// Before: the honest dV passed, and so did dV = 0 and dV x 2. A bound that admits both judges
// nothing: the first tier leaves the tensor not judged (in the record, the JSON and the table).
// The second, FlashAttention's rule against the computation in the dtype (whose scores, rounded to
// bf16 at 3e5, miss dV by about 1.25) plus the given LSE's share (an fp32 LSE near 9e5 moves each
// recomputed P by up to 27%), has a tolerance above dV's own size there: it judges nothing either,
// and dV = 0 and dV x 2 stay not judged, never a pass (dV x 8 fails the first tier's vacuous bound).
// Without the second tier, not judged as well. (tests/harness/test_baseline_rule.cpp: its passes
// and failures.)
TEST(LargeLogitVerdicts, GradientWhoseBoundAdmitsZeroAndTwiceIsNotJudgedByTheFirstTier) {
  register_large_logit_impls();
  const CheckRecord honest = run_check(large_logit_case("ll-honest"));
  const TensorCheck& dv = tensor(honest, "dV");
  EXPECT_EQ(dv.verdict, Verdict::not_judged) << to_table(honest);
  EXPECT_TRUE(dv.baseline_rule.applied);
  EXPECT_TRUE(dv.baseline_rule.vacuous);
  EXPECT_GT(dv.vacuous, 0);
  EXPECT_EQ(dv.above_rigorous_bound, 0);
  EXPECT_EQ(dv.outside_envelope, 0);
  EXPECT_EQ(honest.verdict, Verdict::not_judged);
  EXPECT_NE(to_table(honest).find("admits 0 and twice the answer"), std::string::npos);
  EXPECT_NE(to_table(honest).find("second tier: nothing judged"), std::string::npos);
  EXPECT_NE(to_json(honest).find("\"vacuous\": " + std::to_string(dv.vacuous)), std::string::npos);
  for (const char* impl : {"ll-dv-zero", "ll-dv-times-2"}) {
    const CheckRecord wrong = run_check(large_logit_case(impl));
    EXPECT_EQ(tensor(wrong, "dV").verdict, Verdict::not_judged) << impl << "\n" << to_table(wrong);
    EXPECT_EQ(wrong.verdict, Verdict::not_judged) << impl;
  }
  EXPECT_EQ(run_check(large_logit_case("ll-dv-times-8")).verdict, Verdict::fail);
  CheckOptions first_tier_only;
  first_tier_only.baseline_rule = false;
  const CheckRecord alone = run_check(large_logit_case("ll-dv-zero"), first_tier_only);
  EXPECT_EQ(tensor(alone, "dV").verdict, Verdict::not_judged) << to_table(alone);
}

// No false "not judged" at ordinary logits: the same shapes with normal inputs pass everywhere,
// and the wrong dV fails there.
TEST(LargeLogitVerdicts, OrdinaryLogitsStayJudged) {
  register_large_logit_impls();
  for (DType dtype : {DType::fp16, DType::bf16}) {
    Case c = large_logit_case("ll-honest");
    c.problem.dtype = dtype;
    c.dist = *parse_distribution("normal");
    const CheckRecord honest = run_check(c);
    EXPECT_EQ(honest.verdict, Verdict::pass) << to_table(honest);
    for (const TensorCheck& t : honest.tensors) EXPECT_EQ(t.vacuous, 0) << t.name;
    c.impl = "ll-dv-times-2";
    EXPECT_EQ(run_check(c).verdict, Verdict::fail);
  }
}

// fp16 inputs near 200 with the default scale: dQ and dK are 0 within the reference's bound. Their
// bound passed 65504 before docs/error-bounds.md (F5'), so any finite value was accepted as pass
// (dK + 1000 passed); it is now 1.3e3 and 2.6e3 (what an fp16 dP of 1e4 costs), far below the size
// of their summands (P (|dP| + |D|) |K| |scale|, above 1e5): judged against the bound, and dK + 1e4
// fails. The twins: the same bounds scaled past those summands count as vacuous, not judged; and
// scaled by 100, between a sixteenth and the whole of the summands' size, too (the rule of
// 2026-11-28, against the summands' whole size, still judged them: any value up to it passed).
TEST(LargeLogitVerdicts, ExactZeroGradientsAreJudgedWhereTheBoundIsBelowTheirSummands) {
  test_impls::register_broken("fp16-dk-plus-1e4", "naive", ArithmeticModel::naive, {},
                              [](const Problem&, BackwardArgs& a) {
                                map(a.dk, [](double x) { return x + 1e4; });
                              });
  Case c = large_logit_case("naive");  // its shape, with fp16 inputs near 200
  c.problem.dtype = DType::fp16;
  c.dist = *parse_distribution("scaled:200");
  const CheckRecord honest = run_check(c);
  CheckOptions loosened;
  loosened.bound_scale = 1e4;
  loosened.baseline_rule = false;
  const CheckRecord twin = run_check(c, loosened);
  CheckOptions half_summands = loosened, half_summands_old_rule = loosened;
  half_summands.bound_scale = half_summands_old_rule.bound_scale = 100;
  half_summands_old_rule.vacuous_magnitude_fraction = 1;
  const CheckRecord half = run_check(c, half_summands), half_old = run_check(c, half_summands_old_rule);
  for (const char* name : {"dQ", "dK"}) {
    EXPECT_EQ(tensor(half, name).verdict, Verdict::not_judged) << name << "\n" << to_table(half);
    EXPECT_EQ(tensor(half_old, name).verdict, Verdict::pass) << name << "\n" << to_table(half_old);
    const TensorCheck& t = tensor(honest, name);
    EXPECT_LT(t.max_rigorous_bound, 65504) << name << "\n" << to_table(honest);
    EXPECT_GT(t.max_rigorous_bound, 100) << name << ": the case no longer has exact zeros with a large bound";
    EXPECT_EQ(t.verdict, Verdict::pass) << name << "\n" << to_table(honest);
    EXPECT_EQ(tensor(twin, name).verdict, Verdict::not_judged) << name;
    EXPECT_GT(tensor(twin, name).vacuous, 0) << name;
  }
  c.impl = "fp16-dk-plus-1e4";
  const CheckRecord wrong = run_check(c);
  EXPECT_EQ(tensor(wrong, "dK").verdict, Verdict::fail) << to_table(wrong);
}

// One-hot rows at logits near 1e15 (bf16): dQ is exactly 0, and the flash model's bound (its P is
// recomputed from an fp32 LSE whose ulp is 2^26 there) reaches past 1/16 of the envelope's width at
// most elements: not judged by the first tier, and a dQ moved to half its bound is not a pass.
// (At 1e12 the bound, 2e6, is 2% of the width and judges.)
TEST(LargeLogitVerdicts, ExactZeroGradientsWithABoundNearTheEnvelopeAreNotJudged) {
  register_large_logit_impls();
  register_broken_half_bound_dq();
  Case c = large_logit_case("ll-honest");
  c.dist = *parse_distribution("large-logits:1e15");
  CheckOptions first_tier_only;
  first_tier_only.baseline_rule = false;
  const CheckRecord honest = run_check(c, first_tier_only);
  const TensorCheck& dq = tensor(honest, "dQ");
  EXPECT_EQ(dq.verdict, Verdict::not_judged) << to_table(honest);
  EXPECT_GT(dq.vacuous, 0);
  EXPECT_EQ(dq.errors.max_abs, 0) << "the exact dQ is no longer 0";
  // The second tier's tolerance there (the given fp32 LSE, near 1e16, moves P by factors) is
  // vacuous too: still not judged.
  EXPECT_EQ(tensor(run_check(c), "dQ").verdict, Verdict::not_judged);
  c.impl = "ll-dq-half-bound";
  EXPECT_NE(run_check(c, first_tier_only).verdict, Verdict::pass);
  EXPECT_NE(run_check(c).verdict, Verdict::pass);
}

// fa2 without its declaration that the backward recomputes the forward's logits bit for bit.
class Undeclared final : public AttentionImpl {
 public:
  explicit Undeclared(AttentionImpl& base) : base_(base) {}
  std::string name() const override { return base_.name() + "-undeclared"; }
  std::string description() const override { return base_.description(); }
  std::string where() const override { return base_.where(); }
  Support declared_support() const override { return base_.declared_support(); }
  std::string unsupported_reason(const Problem& p, bool b) const override { return base_.unsupported_reason(p, b); }
  void forward(const Problem& p, const ForwardArgs& a) override { base_.forward(p, a); }
  void backward(const Problem& p, const BackwardArgs& a) override { base_.backward(p, a); }

 private:
  AttentionImpl& base_;
};

// docs/error-bounds.md (B1'): at bf16 logits near 3e5 the emulated fa2 declares that its backward
// recomputes each logit as its forward did, and its dV is judged by the first tier (before, and
// without the declaration, its bound admitted 0 and twice the answer); dV x 1.5 then fails the
// first tier.
TEST(LargeLogitVerdicts, LogitsRecomputedBitForBitLetTheFirstTierJudgeDv) {
  AttentionImpl* fa2 = find_implementation("fa2");
  ASSERT_NE(fa2, nullptr);
  Case c = large_logit_case("fa2");
  if (const std::string why = refusal(*fa2, c.problem, true); !why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(fa2->backward_recomputes_forward_logits()) << "the emulated fa2 declares it";
  const CheckRecord declared = run_check(c);
  EXPECT_EQ(declared.verdict, Verdict::pass) << to_table(declared);
  EXPECT_EQ(tensor(declared, "dV").vacuous, 0) << to_table(declared);
  Undeclared undeclared(*fa2);
  const CheckRecord before = run_check(c, undeclared);
  EXPECT_GT(tensor(before, "dV").vacuous, 0) << to_table(before);
  EXPECT_NE(tensor(before, "dV").verdict, Verdict::pass);
  EXPECT_LT(tensor(declared, "dV").max_rigorous_bound, tensor(before, "dV").max_rigorous_bound / 2);
  test_impls::register_broken("fa2-dv-times-1.5", "fa2", ArithmeticModel::flash, {},
                              [](const Problem&, BackwardArgs& a) { map(a.dv, [](double x) { return 1.5 * x; }); });
  c.impl = "fa2-dv-times-1.5";
  const CheckRecord wrong = run_check(c);
  EXPECT_EQ(tensor(wrong, "dV").verdict, Verdict::fail) << to_table(wrong);
  EXPECT_GT(tensor(wrong, "dV").above_rigorous_bound, 0);
}

// A sampled check computes the envelopes of its sample only: a sampled row's O, LSE and dQ are those
// of the whole computation, and a sampled column's dK and dV contain it (the rows outside the sample
// add a wider W_i). Every element the sample judges gets an envelope.
TEST(SampledEnvelopes, CoverTheSampleAndContainTheWholeComputation) {
  Problem p;
  p.dtype = DType::bf16;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seqlen_q = 300;
  p.seqlen_k = 260;
  p.head_dim = 16;
  p.window_left = 70;
  p.window_right = 3;
  const Inputs in = generate_inputs(p, *parse_distribution("normal"), 3);
  const SamplePlan plan = plan_sample(p, 4, 7);
  ASSERT_FALSE(plan.full);
  const OutputSample& s = plan.sample;
  const Envelopes full = bound_free_envelopes(p, in, true, 1.0 / 16);
  const Envelopes part = bound_free_envelopes(p, in, true, 1.0 / 16, &s);
  const std::int64_t d = p.head_dim;
  std::int64_t rows = 0, cols = 0, wider = 0;
  for (std::int64_t h = 0; h < p.heads_q; ++h)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
      const std::int64_t flat = h * p.seqlen_q + i;
      if (!s.row(flat)) continue;
      ++rows;
      const auto at = static_cast<std::size_t>(flat);
      EXPECT_EQ(part.lse.lo[at], full.lse.lo[at]) << h << " " << i;
      EXPECT_EQ(part.lse.hi[at], full.lse.hi[at]) << h << " " << i;
      for (std::int64_t c = 0; c < d; ++c) {
        const auto x = static_cast<std::size_t>((i * p.heads_q + h) * d + c);
        EXPECT_EQ(part.o.lo[x], full.o.lo[x]);
        EXPECT_EQ(part.o.hi[x], full.o.hi[x]);
        EXPECT_EQ(part.dq.hi[x], full.dq.hi[x]);
      }
    }
  for (std::int64_t hk = 0; hk < p.heads_kv; ++hk)
    for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
      if (!s.col(hk * p.seqlen_k + j)) continue;
      ++cols;
      for (std::int64_t c = 0; c < d; ++c) {
        const auto x = static_cast<std::size_t>((j * p.heads_kv + hk) * d + c);
        EXPECT_GE(part.dk.hi[x], full.dk.hi[x]);
        EXPECT_EQ(part.dk.lo[x], -part.dk.hi[x]);
        EXPECT_EQ(part.dv.hi[x], full.dv.hi[x]);  // |dO| sums: no W_i in them
        wider += part.dk.hi[x] > full.dk.hi[x];
      }
    }
  EXPECT_GT(rows, 0);
  EXPECT_GT(cols, 0);
  EXPECT_GT(wider, 0) << "the rows outside the sample no longer add to the sampled columns";
}

}  // namespace
}  // namespace flashproof
