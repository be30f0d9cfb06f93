// A perturbation test of the verdict. An implementation that returns the certified
// reference rounded to each output's dtype (or the naive baseline's own outputs) must not fail,
// which is itself a no-false-alarm check of the rigorous bounds. Moving one element of one tensor
// just past its bound (the implementation's rigorous bound plus the reference's) must fail that
// tensor and leave every other tensor's verdict as it was; moving it to half its bound must not
// fail it, so the test is not vacuous. Elements no rigorous bound judges are moved past their
// bound-free envelope instead, or counted as not judgeable: never counted as passed.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <type_traits>

#include "bounds/envelope.h"
#include "bounds/implementation_bounds.h"
#include "harness/check.h"
#include "harness/check_render.h"
#include "tests/harness/pass_or_vacuous.h"

namespace flashproof {
namespace {

// How far past the bound a "must fail" move goes: 1% beyond it, then outward to the next dtype value.
// (At 1.0 every move fails too, the check's comparison being exact; at 0.5 nearly all pass.)
constexpr double kPast = 1.01;
constexpr const char* kTensors[] = {"O", "LSE", "dQ", "dK", "dV"};

// Tensor t of anything with members o, lse, dq, dk, dv (bounds, envelopes, outputs).
template <class S>
auto& member(S& s, int t) {
  using U = std::remove_const_t<S>;
  decltype(&U::o) m[] = {&U::o, &U::lse, &U::dq, &U::dk, &U::dv};
  return s.*m[t];
}
const reference::CertifiedTensor& ref_of(const reference::Results& r, int t) {
  if (t < 2) return t == 0 ? r.forward.o : r.forward.lse;
  return t == 2 ? r.backward->dq : t == 3 ? r.backward->dk : r.backward->dv;
}

// The dtype value next to v in direction dir, and the nearest one strictly beyond `target`.
double step(DType t, double v, int dir) {
  if (t == DType::fp32) return std::nextafter(static_cast<float>(v), dir > 0 ? INFINITY : -INFINITY);
  if (v == 0) return from_bits(t, dir > 0 ? 0x0001u : 0x8001u);
  const std::uint32_t b = to_bits(t, v);
  return from_bits(t, (v > 0) == (dir > 0) ? b + 1 : b - 1);
}
double beyond(DType t, double target, int dir) {
  double v = round_to(t, target);
  while (dir > 0 ? !(v > target) : !(v < target)) v = step(t, v, dir);
  return v;
}

// Returns the reference rounded to each output's dtype (the set rounds), or the naive baseline's
// outputs, with at most one element moved. Keeps the case's context: an implementation only sees
// tensors.
struct Move {
  int tensor = -1;
  std::size_t x = 0;
  double value = 0;
};
class ExactRounded final : public AttentionImpl {
 public:
  ExactRounded(const CaseContext& ctx, ArithmeticModel model, bool naive_base) : model_(model) {
    for (int t = 0; t < (ctx.reference.backward ? 5 : 2); ++t)
      if (naive_base)
        member(*ctx.baseline, t).for_each_value([&](std::size_t, double v) { base_[t].push_back(v); });
      else
        base_[t] = ref_of(ctx.reference, t).value;
  }
  std::string name() const override { return "exact-rounded"; }
  std::string description() const override { return "the certified reference, rounded"; }
  std::string where() const override { return "host"; }
  ArithmeticModel arithmetic_model() const override { return model_; }
  std::string unsupported_reason(const Problem&, bool) const override { return {}; }
  void forward(const Problem&, const ForwardArgs& a) override { write(a.o, 0), write(a.lse, 1); }
  void backward(const Problem&, const BackwardArgs& a) override { write(a.dq, 2), write(a.dk, 3), write(a.dv, 4); }
  const std::vector<double>& base(int t) const { return base_[t]; }
  Move move;

 private:
  void write(HostTensor& out, int t) const {  // row-major over the logical shape, as the reference
    const Shape& s = out.shape();
    std::size_t x = 0;
    for (std::int64_t a = 0; a < s[0]; ++a)
      for (std::int64_t b = 0; b < s[1]; ++b)
        for (std::int64_t c = 0; c < s[2]; ++c)
          for (std::int64_t d = 0; d < s[3]; ++d, ++x)
            out.set(a, b, c, d, move.tensor == t && move.x == x ? move.value : base_[t][x]);
  }
  ArithmeticModel model_;
  std::vector<double> base_[5];
};

Case make(DType dt, bool backward, std::int64_t sq, std::int64_t sk, std::int64_t d, std::int64_t wl,
          std::int64_t wr, const char* dist, std::uint64_t seed) {
  Case c;
  c.backward = backward;
  c.problem.dtype = dt;
  c.problem.heads_q = c.problem.heads_kv = 2;
  c.problem.seqlen_q = sq;
  c.problem.seqlen_k = sk;
  c.problem.head_dim = d;
  c.problem.window_left = wl;
  c.problem.window_right = wr;
  c.dist = *parse_distribution(dist);
  c.seed = seed;
  return c;
}

// Every kind of case, in both dtypes: forward and backward, no mask, causal, a local window, more
// queries than keys under causal (rows that see no key), GQA, scaled and large logits, and inputs
// outside the domain (a softmax scale of 1e20, where only the envelopes judge).
std::vector<Case> cases() {
  std::vector<Case> v;
  for (DType dt : {DType::fp16, DType::bf16}) {
    v.push_back(make(dt, false, 17, 23, 64, -1, -1, "normal", 1));
    v.push_back(make(dt, true, 17, 23, 16, -1, -1, "normal", 2));
    v.push_back(make(dt, true, 20, 20, 64, -1, 0, "normal", 3));
    v.push_back(make(dt, true, 24, 30, 16, 4, 2, "normal", 4));
    v.push_back(make(dt, true, 40, 12, 16, -1, 0, "normal", 5));
    Case gqa = make(dt, true, 13, 19, 64, -1, -1, "normal", 6);
    gqa.problem.batch = 2, gqa.problem.heads_q = 4;
    v.push_back(gqa);
    v.push_back(make(dt, true, 16, 24, 64, -1, -1, "scaled:4", 7));
    v.push_back(make(dt, true, 9, 33, 16, -1, -1, "large-logits:1e3", 8));
    v.push_back(make(dt, false, 21, 21, 64, -1, 0, "large-logits:1e3", 9));
    Case ood = make(dt, true, 9, 20, 16, -1, 5, "normal", 10);
    ood.problem.scale = 1e20f;
    v.push_back(ood);
  }
  return v;
}

// An element of tensor t that rule 2 judges and can be moved past its bound in the dtype: checked,
// finite exact value inside the range, finite nonzero bound, a finite moved value. Spread over the
// tensor by `salt`; nullopt when there is none.
std::optional<std::size_t> judged_element(DType dt, const reference::CertifiedTensor& ref,
                                          const std::vector<double>& bound, int dir, unsigned salt) {
  std::vector<std::size_t> ok;
  for (std::size_t x = 0; x < ref.value.size(); ++x) {
    const double r = ref.value[x], b = bound[x];
    if (ref.checked[x] && std::isfinite(r) && std::isfinite(b) && b > 0 &&
        std::isfinite(round_to(dt, std::fabs(r) + ref.bound[x])) &&
        std::isfinite(beyond(dt, r + dir * kPast * (b + ref.bound[x]), dir)))
      ok.push_back(x);
  }
  if (ok.empty()) return std::nullopt;
  return ok[(salt * 2654435761u) % ok.size()];
}

// An element without a finite bound whose envelope has a finite value of the dtype beyond it.
std::optional<std::size_t> envelope_element(DType dt, const bounds::Envelope& e, const std::vector<double>& bound, int dir) {
  for (std::size_t x = 0; x < bound.size(); ++x)
    if (!std::isfinite(bound[x]) && std::isfinite(beyond(dt, dir > 0 ? e.hi[x] : e.lo[x], dir))) return x;
  return std::nullopt;
}

struct Counts {
  int judged = 0, envelope = 0, not_judgeable = 0, in_domain_tensors = 0, inside = 0, inside_skipped = 0;
};

// The check with element x of tensor t set to v; every other tensor's verdict must not move.
TensorCheck moved(const Case& c, ExactRounded& impl, const CaseContext& ctx, int t, std::size_t x, double v,
                  const CheckRecord& honest, const std::string& what) {
  impl.move = {t, x, v};
  const CheckRecord r = run_check(c, impl, ctx);
  impl.move = {};
  for (std::size_t u = 0; u < r.tensors.size(); ++u) {
    if (static_cast<int>(u) == t) continue;
    EXPECT_STREQ(verdict_name(r.tensors[u].verdict), verdict_name(honest.tensors[u].verdict))
        << what << " other tensor " << r.tensors[u].name;
  }
  return r.tensors[static_cast<std::size_t>(t)];
}

TEST(Perturbation, OneElementPastItsBoundFailsThatTensorAlone) {
  const CheckOptions opt;
  Counts n;
  unsigned salt = 0;
  for (const Case& c : cases()) {
    const Problem& p = c.problem;
    const CaseContext ctx = prepare_case(c, opt, /*with_baseline=*/true);
    const bool in_domain = ctx.domain_note.empty();
    const bounds::Envelopes env = bounds::bound_free_envelopes(p, ctx.inputs, c.backward, opt.envelope_slack);
    const std::pair<ArithmeticModel, bool> variants[] = {
        {ArithmeticModel::flash, false}, {ArithmeticModel::naive, false}, {ArithmeticModel::naive, true}};
    for (auto [model, naive_base] : variants) {
      ExactRounded impl(ctx, model, naive_base);
      const std::string what = p.describe() + " " + distribution_name(c.dist) + (c.backward ? " bwd" : " fwd") +
                               (model == ArithmeticModel::flash ? " flash" : " naive") +
                               (naive_base ? " naive-outputs" : " exact-rounded");
      const CheckRecord honest = run_check(c, impl, ctx, opt);
      // No false alarm: pass inside the domain (every tensor has finite bounds here), out-of-domain outside.
      // (inside the domain, not judged where a bound is vacuous: large logits, peaked softmaxes).
      if (in_domain)
        EXPECT_TRUE(test_impls::pass_or_vacuous(honest)) << what << "\n" << to_table(honest);
      else
        EXPECT_STREQ(verdict_name(honest.verdict), "out-of-domain") << what << "\n" << to_table(honest);
      // The same call the check makes (d_error only feeds the regression rule's share).
      const bounds::ImplementationBounds bounds =
          in_domain ? bounds::implementation_bounds(p, ctx.inputs, model, c.backward, 0, nullptr,
                                                    impl.gqa_gradient_reduction())
                    : bounds::infinite_bounds(p, c.backward);
      for (std::size_t t = 0; t < honest.tensors.size(); ++t) {
        const int ti = static_cast<int>(t), dir = salt % 2 ? -1 : 1;
        const DType dt = ti == 1 ? DType::fp32 : p.dtype;
        const reference::CertifiedTensor& ref = ref_of(ctx.reference, ti);
        const std::vector<double>& bound = member(bounds, ti);
        const TensorCheck& h = honest.tensors[t];
        const std::string at = what + " " + kTensors[t];
        ASSERT_EQ(h.name, kTensors[t]);
        if (!naive_base) {  // this bound is the check's: same largest bound over the compared elements
          double largest = 0;
          for (std::size_t x = 0; x < bound.size(); ++x)
            if (ref.checked[x] && std::isfinite(ref.value[x]) && std::isfinite(round_to(dt, ref.value[x])) &&
                std::isfinite(bound[x]))
              largest = std::max(largest, bound[x]);
          EXPECT_EQ(largest, h.max_rigorous_bound) << at;
        }
        n.in_domain_tensors += in_domain;
        if (const auto x = judged_element(dt, ref, bound, dir, salt++)) {
          const double r = ref.value[*x], b = bound[*x];
          const double v = beyond(dt, r + dir * kPast * (b + ref.bound[*x]), dir);
          const TensorCheck m = moved(c, impl, ctx, ti, *x, v, honest, at);
          EXPECT_STREQ(verdict_name(m.verdict), "fail") << at << " element " << *x << " moved to " << v << ", r " << r;
          EXPECT_EQ(m.above_rigorous_bound, h.above_rigorous_bound + 1) << at << " element " << *x;
          ++n.judged;
          // Not vacuous: half the bound in from the exact value is accepted.
          const double inside = round_to(dt, r + dir * 0.5 * b);
          if (std::fabs(inside - r) <= 0.9 * b && inside != round_to(dt, impl.base(ti)[*x])) {
            const TensorCheck w = moved(c, impl, ctx, ti, *x, inside, honest, at + " inside");
            EXPECT_STREQ(verdict_name(w.verdict), verdict_name(h.verdict))
                << at << " element " << *x << " moved inside to " << inside;
            EXPECT_EQ(w.above_rigorous_bound, h.above_rigorous_bound) << at << " inside";
            ++n.inside;
          } else {
            ++n.inside_skipped;
          }
        } else if (const auto y = envelope_element(dt, member(env, ti), bound, dir)) {
          const double v = beyond(dt, dir > 0 ? member(env, ti).hi[*y] : member(env, ti).lo[*y], dir);
          const TensorCheck m = moved(c, impl, ctx, ti, *y, v, honest, at);
          EXPECT_STREQ(verdict_name(m.verdict), "fail") << at << " element " << *y << " moved past envelope to " << v;
          EXPECT_EQ(m.outside_envelope, h.outside_envelope + 1) << at << " element " << *y;
          ++n.envelope;
        } else {
          ++n.not_judgeable;  // reported below, never a pass
          std::cout << "not judgeable: " << at << "\n";
        }
      }
    }
  }
  std::cout << "perturbations: " << n.judged << " past the rigorous bound, " << n.envelope
            << " past the envelope, " << n.not_judgeable << " not judgeable; " << n.inside << " moved inside ("
            << n.inside_skipped << " inside moves skipped: half the bound rounds outside 0.9 of it or onto the base)\n";
  RecordProperty("judged", n.judged);
  RecordProperty("envelope", n.envelope);
  RecordProperty("not_judgeable", n.not_judgeable);
  RecordProperty("inside", n.inside);
  // Every tensor of every in-domain case is judged by its rigorous bound.
  EXPECT_EQ(n.judged, n.in_domain_tensors);
  EXPECT_GT(n.judged, 200);
  EXPECT_GT(n.inside, n.judged / 2);
}

}  // namespace
}  // namespace flashproof
