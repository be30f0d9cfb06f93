#include "harness/check.h"
#include "harness/logit_scan.h"
#include "harness/verdict.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "bounds/given_o_error.h"
#include "bounds/implementation_bounds.h"
#include "harness/baseline_rule.h"
#include "harness/sample_plan.h"
#include "core/kv_cache.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/emu/emulator.h"
#include "kernels/registry.h"

namespace flashproof {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

Outputs run_implementation(AttentionImpl& impl, const ValidProblem& valid, bool backward, const Inputs& in,
                           const OutputSample* wanted) {
  const Problem& p = valid;
  if (in.cache) {  // the cache problem's layouts in, the logical problem's out (core/kv_cache.h)
    const Problem& cp = in.cache->problem;
    if (backward) throw std::invalid_argument("a KV-cache problem is forward only");
    if (logical_problem(cp) != p) throw std::invalid_argument("run_implementation: the cache's problem is not this one's");
    HostTensor o = poisoned_output(cp.dtype, cp.q_shape()), lse = poisoned_output(DType::fp32, cp.lse_shape(), 3);
    const KvCacheInputs& c = *in.cache;
    // Appending writes the cache: the implementation gets its own copy, then compared with the
    // cache appended on the host (the prepared inputs stay those of every implementation).
    HostTensor k = cp.appends() ? c.k.contiguous_copy() : c.k, v = cp.appends() ? c.v.contiguous_copy() : c.v;
    const KvAppend append{c.k_new, c.v_new, k, v};
    // Every row is computed: a sample's rows are the logical problem's, not the cache's.
    impl.forward(cp, ForwardArgs{cache_rows_view(cp, in.q), k, v, o, lse, nullptr, cp.appends() ? &append : nullptr});
    Outputs out{logical_rows_view(o), logical_lse(cp, lse), {}, {}, {}, {}};
    if (cp.appends()) {
      HostTensor expected_k = c.k.contiguous_copy(), expected_v = c.v.contiguous_copy();
      append_to_cache(cp, c.k_new, c.v_new, expected_k, expected_v);
      out.cache_difference = cache_difference("K cache", k, expected_k);
      if (out.cache_difference.empty()) out.cache_difference = cache_difference("V cache", v, expected_v);
    }
    return out;
  }
  Outputs out{poisoned_output(p.dtype, p.q_shape()), poisoned_output(DType::fp32, p.lse_shape(), 3), {}, {}, {}};
  const bool forward_in_full = backward && wanted && wanted->any_col();
  impl.forward(p, ForwardArgs{in.q, in.k, in.v, out.o, out.lse, forward_in_full ? nullptr : wanted});
  if (backward) {
    out.dq = poisoned_output(p.dtype, p.q_shape());
    out.dk = poisoned_output(p.dtype, p.kv_shape());
    out.dv = poisoned_output(p.dtype, p.kv_shape());
    impl.backward(p, BackwardArgs{in.q, in.k, in.v, out.o, out.lse, in.dout, out.dq, out.dk,
                                  out.dv, wanted});
  }
  return out;
}

namespace {

// The valid domain (docs/spec.md "Valid domain"): finite inputs, exact scaled logits |scale q.k| <= 2^64 and ALiBi biases likewise. Cauchy-Schwarz
// (with the rows' norms, rounded up) settles most cases at once; otherwise the logits are
// computed. Read from the reference's copy of the inputs, so they are converted once per check.
std::string domain_violation(const reference::DenseInputs& in) {
  const Problem& p = in.p;
  for (const reference::DenseRows* t : {&in.q, &in.k, &in.v, &in.dout})
    for (double x : t->data)
      if (!std::isfinite(x)) return "inputs contain NaN or inf";
  const double max_q = in.q.norm.empty() ? 0 : *std::max_element(in.q.norm.begin(), in.q.norm.end());
  const double max_k = in.k.norm.empty() ? 0 : *std::max_element(in.k.norm.begin(), in.k.norm.end());
  const double limit = 0x1p64, scale = std::fabs(static_cast<double>(p.softmax_scale()));
  // ALiBi's biases |slope| |distance| are held to the same limit; a distance is below sq + sk.
  double max_slope = 0;
  for (float s : p.alibi_slopes) max_slope = std::max(max_slope, std::fabs(static_cast<double>(s)));
  const double max_bias = max_slope * static_cast<double>(p.max_seqlen_q() + p.max_seqlen_k());
  if (scale * max_q * max_k <= limit * (1 - 1e-12) && max_bias <= limit) return {};
  if (scan_logits(p, in.q, in.k, limit).beyond_limit)
    return p.alibi() ? "a scaled logit or an ALiBi bias exceeds 2^64" : "a scaled logit exceeds 2^64";
  return {};
}

const OutputSample* wanted(const CaseContext& ctx) { return ctx.sample ? &*ctx.sample : nullptr; }

// The bounds and envelopes of a check (the one call of run_check and rigorous_bounds), with
// CheckOptions::bound_scale applied to the rigorous bounds.
bounds::BoundsAndEnvelopes judged_bounds(const ValidProblem& valid, const Inputs& in, const bounds::BoundsRequest& request,
                                         const CheckOptions& opt) {
  bounds::BoundsAndEnvelopes judged = bounds::bounds_and_envelopes(valid, in, request);
  bounds::ImplementationBounds& rigorous = judged.rigorous;
  if (opt.bound_scale != 1)
    for (std::vector<double>* b : {&rigorous.o, &rigorous.lse, &rigorous.dq, &rigorous.dk, &rigorous.dv})
      for (double& x : *b) x *= opt.bound_scale;
  return judged;
}

// ---- The elements a failure names (TensorCheck::worst_element, first_nan, first_inf) ----

ElementReport element_at(const HostTensor& actual, const reference::CertifiedTensor& ref,
                         const std::vector<double>& bound, std::int64_t index) {
  ElementReport e;
  if (index < 0) return e;
  e.index = index;
  const Shape& shape = actual.shape();
  std::array<std::int64_t, 4> at{0, 0, 0, 0};
  for (int d = 3; d >= 0; --d) {
    at[d] = index % shape[d];
    index /= shape[d];
  }
  e.coord.assign(at.begin(), at.begin() + actual.rank());
  const auto x = static_cast<std::size_t>(e.index);
  e.exact = ref.value[x];
  e.reference_bound = ref.bound[x];
  e.returned = actual.get(at[0], at[1], at[2], at[3]);
  e.bound = x < bound.size() ? bound[x] : INFINITY;
  const double err = std::fabs(e.returned - e.exact);
  e.ratio = e.bound > 0 ? err / e.bound : (err > 0 ? INFINITY : 0.0);
  return e;
}

// %.*g of x.
std::string number(double x, int digits) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
  return buffer;
}

// Locates the tensor's named elements and names them in its reasons (the verdict rules write the
// reasons' counts, harness/verdict.cpp; the elements are added here, after the reason they belong
// to: "..., at dK[0, 3, 1, 5]: exact ..., returned ..., bound ..., reference bound ...").
void name_elements(TensorCheck& t, const HostTensor& actual, const reference::CertifiedTensor& ref,
                   const std::vector<double>& bound) {
  t.worst_element = element_at(actual, ref, bound, t.bound_ratio_index);
  // The first NaN and inf mismatches as the comparison counted them (core/metrics.h), so the named
  // elements are the ones the verdict rules failed.
  if (t.errors.nan_mismatch > 0) t.first_nan = element_at(actual, ref, bound, t.errors.first_nan_index);
  if (t.errors.inf_mismatch > 0) t.first_inf = element_at(actual, ref, bound, t.errors.first_inf_index);
  for (std::string& why : t.reasons) {
    auto starts = [&](const std::string& prefix) { return why.rfind(prefix, 0) == 0; };
    const ElementReport& w = t.worst_element;
    if (w.index >= 0 && t.above_rigorous_bound > 0 &&
        starts(std::to_string(t.above_rigorous_bound) + " elements above the rigorous bound (") && why.back() == ')') {
      why.pop_back();
      why += ", at " + describe_element(t.name, w) + ", bound " + number(w.bound, 3) + ", reference bound " +
             number(w.reference_bound, 3) + ")";
    } else if (t.first_nan.index >= 0 && starts(std::to_string(t.errors.nan_mismatch) + " NaN where the reference is not NaN")) {
      why += " (first at " + describe_element(t.name, t.first_nan) + ")";
    } else if (t.first_inf.index >= 0 && starts(std::to_string(t.errors.inf_mismatch) + " inf/finite mismatches")) {
      why += " (first at " + describe_element(t.name, t.first_inf) + ")";
    }
  }
}

// The problem everything but the implementation under test sees (core/problem.h logical_problem);
// a KV-cache problem is forward only.
// A problem without a cache is validated once, a cache problem's logical problem once more.
ValidProblem logical_of(const ValidProblem& valid, bool backward) {
  if (!valid->kv_cache()) return valid;
  if (backward) throw std::invalid_argument("a KV-cache problem is forward only (no backward)");
  return ValidProblem(logical_problem(valid));
}

void require_supported(const AttentionImpl& impl, const ValidProblem& p, bool backward) {
  if (const std::string e = refusal(impl, p, backward); !e.empty())
    throw std::invalid_argument(impl.name() + " does not support this case: " + e);
}

// `valid` is the logical problem of the case's (core/problem.h logical_problem: the problem itself
// unless it has a KV cache), which everything but the implementation under test sees.
CaseContext prepare(const Case& c, const ValidProblem& valid, const CheckOptions& opt, bool with_baseline) {
  const Problem& p = valid;
  CaseContext ctx;
  auto t0 = Clock::now();
  // A cache problem's inputs come from it (its cache, then its logical inputs); the others' from valid.
  ctx.inputs = c.problem.kv_cache() ? generate_inputs(c.problem, c.dist, c.seed) : generate_inputs(valid, c.dist, c.seed);
  ctx.seconds_inputs = since(t0);
  t0 = Clock::now();
  const reference::DenseInputs dense(valid, ctx.inputs.q, ctx.inputs.k, ctx.inputs.v, &ctx.inputs.dout);
  ctx.seconds_reference = since(t0);
  ctx.domain_note = domain_violation(dense);  // from the reference's copy of the inputs
  t0 = Clock::now();
  reference::Options ref_opt = opt.reference;
  ctx.sample = judged_sample(p, opt.reference.sample, opt.reference.sample_seed);
  ref_opt.plan = ctx.sample ? &*ctx.sample : nullptr;
  ref_opt.sample = 0;  // the plan, or every row and column
  ctx.reference = reference::forward_backward(dense, c.backward, ref_opt);
  ctx.seconds_reference += since(t0);
  if (with_baseline) {
    t0 = Clock::now();
    ctx.baseline =
        run_implementation(*find_implementation("naive"), valid, c.backward, ctx.inputs.without_cache(), wanted(ctx));
    ctx.seconds_baseline = since(t0);
  }
  return ctx;
}

// The check of a supported implementation on a prepared case of a valid problem.
CheckRecord check_prepared(const Case& c, const ValidProblem& valid, AttentionImpl& impl_ref, const CaseContext& ctx,
                           const CheckOptions& opt) {
  const Problem& p = valid;
  AttentionImpl* impl = &impl_ref;
  if (c.backward != ctx.reference.backward.has_value())
    throw std::invalid_argument("run_check: the prepared case was prepared for the other direction");
  AttentionImpl* baseline = find_implementation("naive");
  const Inputs& in = ctx.inputs;

  CheckRecord r;
  r.c = c;
  r.impl_where = impl->where();
  r.reference_backend = reference::backend_name(opt.reference.backend);
  r.seconds_reference = ctx.seconds_reference;
  if (ctx.sample) {
    for (std::size_t x = 0; x < ctx.sample->rows.size(); ++x)
      if (ctx.sample->rows[x]) r.sampled_rows.push_back(static_cast<std::int64_t>(x));
    for (std::size_t x = 0; x < ctx.sample->cols.size(); ++x)
      if (ctx.sample->cols[x]) r.sampled_columns.push_back(static_cast<std::int64_t>(x));
  }
  r.domain_note = ctx.domain_note;
  r.inputs_in_domain = r.domain_note.empty();

  auto t0 = Clock::now();
  const Outputs out = [&] {
    if (c.schedule == 0) return run_implementation(*impl, valid, c.backward, in, wanted(ctx));
    const emu::ScopedSchedule explored(c.schedule);
    return run_implementation(*impl, valid, c.backward, in, wanted(ctx));
  }();
  r.seconds_impl = since(t0);
  r.seconds_inputs = ctx.seconds_inputs;
  r.seconds_baseline = ctx.seconds_baseline;
  std::optional<Outputs> own_base;
  if (!ctx.baseline && impl != baseline) {
    t0 = Clock::now();
    own_base = run_implementation(*baseline, valid, c.backward, in.without_cache(), wanted(ctx));
    r.seconds_baseline = since(t0);
  }
  const Outputs& base = ctx.baseline ? *ctx.baseline : own_base ? *own_base : out;

  const reference::ForwardResult& fwd = ctx.reference.forward;
  r.reference_stats = fwd.stats;
  t0 = Clock::now();
  // A flash-model backward forms D from the O it was given, the implementation's own (check.h).
  std::vector<double> d_error;
  if (c.backward && r.inputs_in_domain && impl->arithmetic_model() == ArithmeticModel::flash)
    d_error = bounds::d_error_of_given_o(p, out.o, {fwd.o.value, fwd.o.bound, fwd.o.checked}, in.dout);
  // Every judged element is held to its bound-free envelope as well as to rule 2: at large logits
  // a finite bound can be wider than the envelope, and where the bound is infinite (or outside the
  // domain) the envelope is all that judges. A sampled check's envelopes cover its sample only.
  // Outside the domain the bounds are infinite and only the envelopes are computed; inside, both
  // in one pass over the groups.
  const bounds::BoundsAndEnvelopes judged = judged_bounds(
      valid, in,
      {.model = impl->arithmetic_model(), .backward = c.backward, .rigorous = r.inputs_in_domain,
       .envelope_slack = opt.envelope_slack, .threads = opt.reference.threads,
       .d_error = d_error.empty() ? nullptr : &d_error, .gqa = impl->gqa_gradient_reduction(), .wanted = wanted(ctx),
       .recomputed_logits = impl->backward_recomputes_forward_logits(), .key_splits = impl->max_key_splits(c.problem)},
      opt);
  const bounds::ImplementationBounds& rigorous = judged.rigorous;
  const bounds::Envelopes& envelopes = judged.envelopes;
  r.seconds_bounds = since(t0);
  t0 = Clock::now();
  using bounds::Envelope, bounds::Envelopes;
  auto judges = [&](const std::vector<double>& bound, Envelope Envelopes::*which,
                    const std::vector<std::uint8_t>* conditional = nullptr) {
    return TensorJudges{bound, conditional, &(envelopes.*which), r.inputs_in_domain};
  };
  // Rule 3 judges O and the gradients only while the logits' fp32 rounding is small (check.h).
  const bool applies = regression_rule_applies(fwd.lse.value, p.dtype, opt);
  // Each tensor judged (harness/verdict.h), then its named elements located.
  auto judge = [&](const std::string& name, const HostTensor& actual, const HostTensor& baseline,
                   const reference::CertifiedTensor& ref, const TensorJudges& j, double k, bool rule3,
                   const std::vector<double>* from_d_error = nullptr) {
    r.tensors.push_back(check_tensor(name, actual, baseline, ref, j, k, rule3, opt, from_d_error));
    name_elements(r.tensors.back(), actual, ref, j.rigorous);
  };
  judge("O", out.o, base.o, fwd.o, judges(rigorous.o, &Envelopes::o), opt.k_forward, applies);
  judge("LSE", out.lse, base.lse, fwd.lse, judges(rigorous.lse, &Envelopes::lse), opt.k_forward, true);
  if (c.backward) {
    const reference::BackwardResult& bwd = *ctx.reference.backward;
    r.reference_stats.fallback_rows += bwd.stats.fallback_rows;
    r.reference_stats.fallback_columns = bwd.stats.fallback_columns;
    r.reference_stats.columns_computed = bwd.stats.columns_computed;
    judge("dQ", out.dq, base.dq, bwd.dq, judges(rigorous.dq, &Envelopes::dq, &rigorous.dq_conditional),
          opt.k_backward, applies, &rigorous.dq_from_d_error);
    judge("dK", out.dk, base.dk, bwd.dk, judges(rigorous.dk, &Envelopes::dk, &rigorous.dk_conditional),
          opt.k_backward, applies, &rigorous.dk_from_d_error);
    judge("dV", out.dv, base.dv, bwd.dv, judges(rigorous.dv, &Envelopes::dv), opt.k_backward, applies);
  }
  // The second tier (harness/baseline_rule.h): the computation in the dtype, run only when some
  // tensor inside the domain is not judged by its rigorous bound.
  const bool second_tier = opt.baseline_rule && r.inputs_in_domain &&
                           std::any_of(r.tensors.begin(), r.tensors.end(),
                                       [](const TensorCheck& t) { return t.verdict == Verdict::not_judged; });
  if (second_tier) {
    const std::unique_ptr<AttentionImpl> dtype_baseline = make_dtype_scores_baseline();
    const Outputs dt = run_implementation(*dtype_baseline, valid, c.backward, in.without_cache(), wanted(ctx));
    const double kf = opt.k_forward, kb = opt.k_backward;
    apply_baseline_rule(r.tensors[0], dt.o, fwd.o, envelopes.o, opt, kf);
    apply_baseline_rule(r.tensors[1], dt.lse, fwd.lse, envelopes.lse, opt, kf);
    if (c.backward) {
      const reference::BackwardResult& bwd = *ctx.reference.backward;
      const bool from_lse = impl->arithmetic_model() == ArithmeticModel::flash;
      auto share = [&](const reference::CertifiedTensor& g) { return from_lse ? given_lse_share(out.lse, fwd.lse, g) : 0.0; };
      apply_baseline_rule(r.tensors[2], dt.dq, bwd.dq, envelopes.dq, opt, kb, share(bwd.dq));
      apply_baseline_rule(r.tensors[3], dt.dk, bwd.dk, envelopes.dk, opt, kb, share(bwd.dk));
      apply_baseline_rule(r.tensors[4], dt.dv, bwd.dv, envelopes.dv, opt, kb, share(bwd.dv));
    }
  }
  if (!out.cache_difference.empty()) {  // appended keys misplaced or missing: fails whatever O is
    TensorCheck cache;
    cache.name = "KV cache";
    cache.dtype = p.dtype;
    cache.verdict = Verdict::fail;
    cache.reasons.push_back("the cache after the call is not the cache with the appended keys: " + out.cache_difference);
    r.tensors.push_back(std::move(cache));
  }
  r.seconds_checks = since(t0);

  judge_case(r);
  return r;
}

}  // namespace

std::string describe_element(const std::string& name, const ElementReport& e) {
  std::string s = name + "[";
  for (std::size_t d = 0; d < e.coord.size(); ++d) s += (d ? ", " : "") + std::to_string(e.coord[d]);
  return s + "]: exact " + number(e.exact, 9) + ", returned " + number(e.returned, 9);
}

// The entries: each makes the case's ValidProblem once (the one validation of a check) and asks
// the implementation once whether it supports the case.
CheckRecord run_check(const Case& c, const CheckOptions& opt) {
  AttentionImpl* impl = find_implementation(c.impl);
  if (!impl) throw std::invalid_argument("unknown implementation '" + c.impl + "' (see `flashproof list`)");
  return run_check(c, *impl, opt);
}

bounds::ImplementationBounds rigorous_bounds(const Case& c, ArithmeticModel model, GqaGradientReduction gqa,
                                             const CheckOptions& opt, std::string* domain_note, bool recomputed_logits,
                                             std::int64_t key_splits) {
  const ValidProblem physical(c.problem);
  const ValidProblem valid = logical_of(physical, c.backward);
  const Inputs in = generate_inputs(physical, c.dist, c.seed);
  // The domain as prepare() decides it, from the reference's copy of the inputs.
  const std::string note =
      domain_violation(reference::DenseInputs(valid, in.q, in.k, in.v, &in.dout));
  if (domain_note) *domain_note = note;
  const std::optional<OutputSample> sample = judged_sample(valid, opt.reference.sample, opt.reference.sample_seed);
  return judged_bounds(valid, in,
                       {.model = model, .backward = c.backward, .rigorous = note.empty(), .envelope_slack = std::nullopt,
                        .threads = opt.reference.threads, .d_error = nullptr, .gqa = gqa,
                        .wanted = sample ? &*sample : nullptr, .recomputed_logits = recomputed_logits,
                        .key_splits = key_splits},
                       opt)
      .rigorous;
}

CaseContext prepare_case(const Case& c, const CheckOptions& opt, bool with_baseline) {
  return prepare(c, logical_of(ValidProblem(c.problem), c.backward), opt, with_baseline);
}

CheckRecord run_check(const Case& c, AttentionImpl& impl, const CheckOptions& opt) {
  const ValidProblem valid(c.problem);
  const ValidProblem logical = logical_of(valid, c.backward);
  require_supported(impl, valid, c.backward);
  return check_prepared(c, logical, impl, prepare(c, logical, opt, false), opt);
}

CheckRecord run_check(const Case& c, AttentionImpl& impl, const CaseContext& ctx, const CheckOptions& opt) {
  const ValidProblem valid(c.problem);
  const ValidProblem logical = logical_of(valid, c.backward);
  require_supported(impl, valid, c.backward);
  return check_prepared(c, logical, impl, ctx, opt);
}

}  // namespace flashproof
