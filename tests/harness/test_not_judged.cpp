// What no rigorous bound judges: elements whose bound is infinite and cases outside the valid domain.
// A finite wrong answer there must fail (the bound-free envelopes, bounds/envelope.h), what the
// envelopes let through is "not judged", never "pass", and the bounds that hold only where nothing
// overflowed (bounds::ImplementationBounds::dq_conditional) judge finite values.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/check.h"
#include "harness/check_render.h"
#include "tests/harness/broken_impl.h"
#include "tests/harness/record_tensor.h"

namespace flashproof {
namespace {

using test_impls::tensor;

// Every element of a tensor set to `value`.
void fill(HostTensor& t, double value) {
  const Shape& s = t.shape();
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d) t.set(a, b, c, d, value);
}

// Logits near 1e21 (a softmax scale of 1e20): outside the domain (|s| <= 2^64), where the reference
// is still certified.
Case out_of_domain_case(const std::string& impl, DType dtype) {
  Case c;
  c.impl = impl;
  c.backward = true;
  c.problem.dtype = dtype;
  c.problem.heads_q = 2;
  c.problem.heads_kv = 1;
  c.problem.seqlen_q = 9;
  c.problem.seqlen_k = 70;
  c.problem.head_dim = 32;
  c.problem.window_right = 5;
  c.problem.scale = 1e20f;
  c.seed = 4;
  return c;
}

TEST(NotJudged, OutsideTheDomainACorrectImplementationIsOutOfDomainNotPass) {
  const CheckRecord r = run_check(out_of_domain_case("naive", DType::fp16));
  ASSERT_FALSE(r.inputs_in_domain);
  EXPECT_EQ(r.verdict, Verdict::out_of_domain) << to_table(r);
  for (const TensorCheck& t : r.tensors) {
    EXPECT_GT(t.unbounded, 0) << t.name;
    EXPECT_EQ(t.outside_envelope, 0) << t.name;
  }
  EXPECT_NE(to_table(r).find("not judged"), std::string::npos);
  EXPECT_NE(to_json(r).find("\"not_judged\": "), std::string::npos);
}

// Each wrong tensor fails alone, outside the domain: before the envelopes every one of these was
// accepted as out-of-domain. dQ and dK carry the scale of 1e20 in their envelopes (an fp32 dS that
// cancels may be that far off), so only a bf16 value past it, 1e30, is certainly wrong there.
TEST(NotJudged, OutsideTheDomainFiniteWrongAnswersFail) {
  using test_impls::register_broken;
  const auto model = ArithmeticModel::naive;
  register_broken("ood-o-minus-1000", "naive", model, [](const Problem&, ForwardArgs& a) { fill(a.o, -1000); });
  register_broken("ood-lse-zero", "naive", model, [](const Problem&, ForwardArgs& a) { fill(a.lse, 0); });
  register_broken("ood-dv-1000", "naive", model, {}, [](const Problem&, BackwardArgs& a) { fill(a.dv, 1000); });
  register_broken("ood-dq-1e30", "naive", model, {}, [](const Problem&, BackwardArgs& a) { fill(a.dq, 1e30); });
  register_broken("ood-dk-1e30", "naive", model, {}, [](const Problem&, BackwardArgs& a) { fill(a.dk, 1e30); });
  const std::pair<const char*, const char*> wrong[] = {{"ood-o-minus-1000", "O"}, {"ood-lse-zero", "LSE"},
                                                       {"ood-dv-1000", "dV"}, {"ood-dq-1e30", "dQ"},
                                                       {"ood-dk-1e30", "dK"}};
  for (DType dtype : {DType::fp16, DType::bf16})
    for (auto [impl, name] : wrong) {
      if (dtype == DType::fp16 && (name == std::string("dQ") || name == std::string("dK"))) continue;  // inf
      const CheckRecord r = run_check(out_of_domain_case(impl, dtype));
      EXPECT_EQ(r.verdict, Verdict::fail) << impl << "\n" << to_table(r);
      for (const TensorCheck& t : r.tensors) {
        const bool broken = t.name == name;
        EXPECT_EQ(t.verdict, broken ? Verdict::fail : Verdict::out_of_domain) << impl << " " << t.name;
        EXPECT_EQ(t.outside_envelope > 0, broken) << impl << " " << t.name;
      }
    }
}

// No false alarm: the shipped implementations outside the domain, at logits from just past 2^64 to
// near the fp32 range, are never failed by the envelopes.
TEST(NotJudged, ShippedImplementationsStayInsideTheirEnvelopes) {
  for (const char* impl : {"naive", "fa1", "fa2", "fa2-deterministic"}) {
    if (!find_implementation(impl)) continue;
    for (DType dtype : {DType::fp16, DType::bf16})
      for (float scale : {1e19f, 1e26f, 1e34f}) {
        Case c = out_of_domain_case(impl, dtype);
        c.problem.head_dim = 64;
        c.problem.scale = scale;
        const CheckRecord r = run_check(c);
        EXPECT_EQ(r.verdict, Verdict::out_of_domain) << impl << " " << scale << "\n" << to_table(r);
      }
  }
}

// Inside the domain: 2^21 keys and more take the flash model's tensor-core sums past gamma's
// convergence (n 2^-22 >= 1/2), so O and LSE have no finite bound. A correct result is not judged
// by the first tier (the second then passes it by the baseline rule), and a wrong one still fails
// on its envelope.
TEST(NotJudged, InsideTheDomainWithoutABoundIsNotJudgedAndEnvelopesStillFail) {
  using test_impls::register_broken;
  register_broken("naive-judged-as-flash", "naive", ArithmeticModel::flash, {});
  register_broken("naive-as-flash-o-minus-1000", "naive", ArithmeticModel::flash,
                  [](const Problem&, ForwardArgs& a) { fill(a.o, -1000); });
  Case c;
  c.problem.seqlen_q = 1;
  c.problem.seqlen_k = std::int64_t{1} << 21;
  c.problem.head_dim = 8;
  c.seed = 2;
  c.impl = "naive-judged-as-flash";
  CheckOptions first_tier_only;
  first_tier_only.baseline_rule = false;
  const CheckRecord honest = run_check(c, first_tier_only);
  ASSERT_TRUE(honest.in_domain);
  EXPECT_EQ(honest.verdict, Verdict::not_judged) << to_table(honest);
  EXPECT_EQ(tensor(honest, "O").verdict, Verdict::not_judged);
  EXPECT_GT(tensor(honest, "O").unbounded, 0);
  EXPECT_EQ(tensor(run_check(c), "O").verdict, Verdict::pass_baseline_rule);
  c.impl = "naive-as-flash-o-minus-1000";
  const CheckRecord wrong = run_check(c);
  EXPECT_EQ(wrong.verdict, Verdict::fail) << to_table(wrong);
  EXPECT_GT(tensor(wrong, "O").outside_envelope, 0);
}

// fp16, two or three keys per row, values near 14000 and a tiny scale: where the model's dS may
// pass 65504, the shipped kernels return inf in some dK columns (the documented fp16 limit) and
// finite values in others. Those finite values are judged by the conditional bound (before, they
// had none, and any finite value passed): the kernel's own are within it, and one moved by 1000
// is not.
TEST(NotJudged, ConditionalBoundsJudgeFiniteGradientsWhereDsMayOverflow) {
  if (!find_implementation("fa2")) GTEST_SKIP() << "fa2 not built";
  test_impls::register_broken("fa2-dk-plus-1000", "fa2", ArithmeticModel::flash, {},
                              [](const Problem& p, BackwardArgs& a) {
                                for (std::int64_t j = 0; j < p.seqlen_k; ++j)
                                  for (std::int64_t c = 0; c < p.head_dim; ++c) {
                                    const double x = a.dk.get(0, j, 0, c);
                                    if (std::isfinite(x)) a.dk.set(0, j, 0, c, x + 1000);
                                  }
                              });
  Case c;
  c.impl = "fa2";
  c.backward = true;
  c.problem.seqlen_q = 8;
  c.problem.seqlen_k = 3;
  c.problem.head_dim = 64;
  c.problem.scale = 4.656612873077393e-10f;
  c.dist = *parse_distribution("scaled:14000");
  c.seed = 6;
  const CheckRecord honest = run_check(c);
  const TensorCheck& dk = tensor(honest, "dK");
  ASSERT_GT(dk.conditional, 0) << to_table(honest);
  EXPECT_EQ(dk.above_rigorous_bound, 0) << to_table(honest);
  EXPECT_EQ(dk.unbounded, 0);
  c.impl = "fa2-dk-plus-1000";
  const CheckRecord wrong = run_check(c);
  EXPECT_GE(tensor(wrong, "dK").above_rigorous_bound, dk.conditional) << to_table(wrong);
}

}  // namespace
}  // namespace flashproof
