#include "harness/check.h"
#include "harness/envelope.h"
#include "harness/logit_scan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "bounds/implementation_bounds.h"
#include "harness/sample_plan.h"
#include "core/json.h"
#include "kernels/emu/emulator.h"
#include "kernels/registry.h"

namespace flashproof {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::out_of_domain: return "out-of-domain";
    case Verdict::not_judged: return "not-judged";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

Outputs run_implementation(AttentionImpl& impl, const Problem& p, bool backward, const Inputs& in,
                           const OutputSample* wanted) {
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

// SPEC's valid domain: finite inputs and exact scaled logits |scale q.k| <= 2^64. Cauchy-Schwarz
// (with the rows' norms, rounded up) settles most cases at once; otherwise the logits are
// computed. Read from the reference's copy of the inputs, so they are converted once per check.
std::string domain_violation(const Problem& p, const reference::DenseInputs& in) {
  for (const reference::DenseRows* t : {&in.q, &in.k, &in.v, &in.dout})
    for (double x : t->data)
      if (!std::isfinite(x)) return "inputs contain NaN or inf";
  const double max_q = in.q.norm.empty() ? 0 : *std::max_element(in.q.norm.begin(), in.q.norm.end());
  const double max_k = in.k.norm.empty() ? 0 : *std::max_element(in.k.norm.begin(), in.k.norm.end());
  const double limit = 0x1p64, scale = std::fabs(static_cast<double>(p.softmax_scale()));
  if (scale * max_q * max_k <= limit * (1 - 1e-12)) return {};
  if (scan_logits(p, in.q, in.k, limit).beyond_limit) return "a scaled logit exceeds 2^64";
  return {};
}

double max_finite_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x)) m = std::max(m, std::fabs(x));
  return m;
}

// Elements whose exact value exceeds the range of dtype `t` (check.h): 0 inside the range,
// 1 beyond it (|r| + B rounds to inf), 2 certainly overflowing (|r| - B rounds to inf too).
// Empty when every element is inside the range (the common case: no per-element array).
enum : std::uint8_t { kInRange = 0, kBeyondRange = 1, kCertainOverflow = 2 };
std::vector<std::uint8_t> range_classes(DType t, const reference::CertifiedTensor& ref) {
  std::vector<std::uint8_t> cls;
  const double largest = from_bits(t, to_bits(t, 0x1p200) - 1);  // the largest finite value
  for (std::size_t x = 0; x < ref.value.size(); ++x) {
    const double r = std::fabs(ref.value[x]), b = ref.bound[x];
    if (!ref.checked[x] || !std::isfinite(r) || !(b <= 0x1p-20 * r)) continue;
    if (r + b <= largest) continue;  // rounds to a finite value: no need to round it
    if (std::isinf(round_to(t, r + b))) {
      if (cls.empty()) cls.assign(ref.value.size(), kInRange);
      cls[x] = std::isinf(round_to(t, r - b)) ? kCertainOverflow : kBeyondRange;
    }
  }
  return cls;
}

// The elements one output leaves to the ordinary comparison: the reference's checked elements, less
// those the range rules or rule 2's admitted overflows settle. Copied only when one is removed.
class ComparedMask {
 public:
  explicit ComparedMask(const std::vector<std::uint8_t>& checked) : checked_(&checked) {}
  const std::vector<std::uint8_t>& get() const { return own_.empty() ? *checked_ : own_; }
  bool operator[](std::size_t x) const { return get()[x] != 0; }
  void remove(std::size_t x) {
    if (own_.empty()) own_ = *checked_;
    own_[x] = 0;
  }

 private:
  const std::vector<std::uint8_t>* checked_;
  std::vector<std::uint8_t> own_;
};

// How one output treats the elements beyond the range: they leave the ordinary comparison where
// it returned the signed inf (accepted) or a finite value at a certain overflow (counted). That
// finite value is admitted when it lies within the implementation's rigorous bound (`rigorous`;
// rule 2, as for the infinities judge_rigorous admits from inside the range) and fails otherwise;
// without a bound (the naive baseline's elements, which only set its compared mask) it counts as
// failing.
// The inf of the other sign is admitted the same way, where r -+ (B + reference bound) rounds to
// it: a bound of millions around an exact 8e4 reaches both infinities.
struct RangeOutcome {
  std::int64_t beyond = 0, as_inf = 0, finite = 0, finite_within_bound = 0, opposite_inf_within_bound = 0;
};
RangeOutcome range_outcome(const HostTensor& a, const reference::CertifiedTensor& ref,
                           const std::vector<std::uint8_t>& cls, ComparedMask& compared,
                           const std::vector<double>* rigorous = nullptr) {
  RangeOutcome o;
  if (cls.empty()) return o;
  a.for_each_value([&](std::size_t x, double v) {
    if (cls[x] == kInRange) return;
    ++o.beyond;
    if (std::isinf(v) && std::signbit(v) == std::signbit(ref.value[x])) {
      ++o.as_inf;
      compared.remove(x);
    } else if (std::isinf(v) && rigorous && std::isfinite((*rigorous)[x])) {
      const double reach = (*rigorous)[x] + ref.bound[x];
      if (round_to(a.dtype(), v > 0 ? ref.value[x] + reach : ref.value[x] - reach) == v) {
        ++o.opposite_inf_within_bound;
        compared.remove(x);
      }
    } else if (std::isfinite(v) && cls[x] == kCertainOverflow) {
      // NaN or inf bound: not admitted.
      if (rigorous && std::fabs(v - ref.value[x]) - ref.bound[x] <= (*rigorous)[x])
        ++o.finite_within_bound;
      else
        ++o.finite;
      compared.remove(x);
    }
  });
  return o;
}

// Rule 2 over the compared elements, in one pass over the output: the error, less the
// reference's own bound, against the implementation's rigorous bound. NaN and inf pairs are left to
// the mismatch rules, except that an infinity where the exact result is finite is within rule 2
// when the bound reaches beyond the dtype's range on that side (r +- (B + reference bound) rounds
// to that infinity): a correct implementation may round there. Such elements leave the comparison
// (so they are not inf mismatches) and are counted. Elements whose exact value is itself beyond
// the range keep the range rules (an inf of the wrong sign fails there).
// A finite value without a finite bound is not judged by rule 2: it is counted (unbounded) and held
// to its bound-free envelope (harness/envelope.h) when there is one. A finite bound flagged
// conditional (the model's intermediates may overflow) is counted as such.
void judge_rigorous(TensorCheck& t, const HostTensor& actual, const reference::CertifiedTensor& ref,
                    const std::vector<double>& bound, const std::vector<std::uint8_t>& cls,
                    ComparedMask& compared, const Envelope* envelope,
                    const std::vector<std::uint8_t>* conditional) {
  const DType dt = actual.dtype();
  actual.for_each_value([&](std::size_t x, double a) {
    if (!compared[x]) return;
    const double r = ref.value[x], b = bound[x];
    if (std::isfinite(a) && !std::isfinite(b)) {
      ++t.unbounded;
      if (envelope && envelope->outside(x, a)) {
        if (t.outside_envelope++ == 0) t.outside_envelope_index = static_cast<std::int64_t>(x);
      }
      return;
    }
    if (!std::isfinite(a)) {
      const bool in_range = cls.empty() || cls[x] == kInRange;
      if (in_range && std::isinf(a) && std::isfinite(r) && std::isfinite(b)) {
        const double reach = b + ref.bound[x];
        if (round_to(dt, a > 0 ? r + reach : r - reach) == a) {
          compared.remove(x);
          ++t.inf_within_bound;
        }
      }
      return;
    }
    if (!std::isfinite(r)) return;
    if (conditional && !conditional->empty() && (*conditional)[x]) ++t.conditional;
    const double e = std::fabs(a - r);
    t.max_rigorous_bound = std::max(t.max_rigorous_bound, b);
    // Divide only where e / b may exceed the largest ratio so far (the margin covers the
    // product's rounding; b = 0 gives NaN here, so it always divides).
    if (!(e < t.bound_ratio * b * (1 - 0x1p-50)) || t.bound_ratio_index < 0) {
      const double ratio = b > 0 ? e / b : (e > 0 ? INFINITY : 0.0);
      if (ratio > t.bound_ratio || t.bound_ratio_index < 0) {
        t.bound_ratio = ratio;
        t.bound_ratio_index = static_cast<std::int64_t>(x);
      }
    }
    if (!(e - ref.bound[x] <= b)) ++t.above_rigorous_bound;
  });
}

// Per query row (indexed like LSE), a bound on the error of D = rowsum(dO * O) formed from
// `given`, the O the implementation's backward was given, in fp32 (the flash model):
// |dO . (O^ - O)| against the reference's O, plus dO times the reference's bound, plus the fp32
// sum's rounding. Rows the reference left out (sampling) get the rounding of O to the dtype alone,
// u_dtype sum |dO| |O^|; rows where O^ is not finite get 0 (the forward fails or is out of the
// domain there; no allowance).
std::vector<double> d_error_of_given_o(const Problem& p, const HostTensor& given,
                                       const reference::CertifiedTensor& ref, const HostTensor& dout) {
  const std::int64_t d = p.head_dim;
  const double fp32_sum = (d + 1) * 0x1p-24 / (1 - (d + 1) * 0x1p-24);  // gamma_{d+1}, products exact or not
  std::vector<double> e(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 0.0);
  std::vector<double> o(d), g(d);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h) {
        given.read_row(b, i, h, o.data());
        dout.read_row(b, i, h, g.data());
        const std::size_t at = static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * d);
        double signed_err = 0, ref_part = 0, abs_sum = 0;
        bool finite = true, checked = true;
        for (std::int64_t c = 0; c < d; ++c) {
          finite = finite && std::isfinite(o[c]);
          checked = checked && ref.checked[at + c];
          abs_sum += std::fabs(g[c] * o[c]);
          if (checked) {
            signed_err += g[c] * (o[c] - ref.value[at + c]);
            ref_part += std::fabs(g[c]) * ref.bound[at + c];
          }
        }
        double& row = e[static_cast<std::size_t>((b * p.heads_q + h) * p.seqlen_q + i)];
        if (!finite) continue;
        const double taken = checked ? std::fabs(signed_err) + ref_part : unit_roundoff(p.dtype) * abs_sum;
        // The double evaluation's own rounding is far below the fp32 term (2^-50 of the sums).
        row = (taken + fp32_sum * abs_sum) * (1 + 0x1p-40) + 0x1p-1000 * d;
      }
  return e;
}

// What a tensor's check is given besides its outputs: the implementation's rigorous bounds, which
// of them are conditional, the bound-free envelope (null when every bound is finite), and whether
// the inputs are inside the valid domain (outside it only the envelope can fail a tensor).
struct TensorJudges {
  const std::vector<double>& rigorous;
  const std::vector<std::uint8_t>* conditional = nullptr;
  const Envelope* envelope = nullptr;
  bool inputs_in_domain = true;
};

TensorCheck check_tensor(const std::string& name, const HostTensor& actual,
                         const HostTensor& baseline, const reference::CertifiedTensor& ref,
                         const TensorJudges& judges, double k, bool regression_applies,
                         const CheckOptions& opt, const std::vector<double>* from_d_error = nullptr) {
  const std::vector<double>& rigorous = judges.rigorous;
  TensorCheck t;
  t.name = name;
  t.dtype = actual.dtype();
  // The floor scales with the reference's magnitude (its summands), not its value, so an exact 0
  // (dQ when seqlen_k = 1) does not collapse the tolerance to 0.
  const double ulps = name == "LSE" ? opt.lse_floor_ulps : opt.floor_ulps;
  // Plus the dtype's smallest subnormal: where every magnitude is 0 (softmax scale 0 makes dQ and dK
  // exactly 0) the floor would be 0, and so would the tolerance that the reference's own bound,
  // however tiny, must stay far below.
  const double floor = ulps * unit_roundoff(actual.dtype()) * max_finite_abs(ref.magnitude) +
                       from_bits(actual.dtype(), 1);
  // dQ, dK of a backward that forms D from the O it is given: the share of that O's error (check.h).
  if (from_d_error)
    for (std::size_t x = 0; x < from_d_error->size(); ++x)
      if (ref.checked[x]) t.d_error_share = std::max(t.d_error_share, (*from_d_error)[x]);
  const std::vector<std::uint8_t> cls = range_classes(actual.dtype(), ref);
  ComparedMask base_compared(ref.checked), compared(ref.checked);
  range_outcome(baseline, ref, cls, base_compared);
  const RangeOutcome range = range_outcome(actual, ref, cls, compared, &rigorous);
  judge_rigorous(t, actual, ref, rigorous, cls, compared, judges.envelope, judges.conditional);
  t.beyond_range = range.beyond;
  t.overflow_as_inf = range.as_inf;
  t.finite_beyond_range = range.finite;
  t.finite_within_bound = range.finite_within_bound;
  t.opposite_inf_within_bound = range.opposite_inf_within_bound;
  CompareOptions co;
  co.rel_floor = floor;
  co.checked = &base_compared.get();
  const ReferenceView view{&ref.value, &ref.bound};
  t.baseline_errors = compare(baseline, view, co);
  t.tolerance = k * (t.baseline_errors.max_abs + t.d_error_share) + floor;
  t.baseline_not_finite = t.baseline_errors.nan_mismatch + t.baseline_errors.inf_mismatch;
  co.uniform_tolerance = t.tolerance;
  co.checked = &compared.get();
  t.errors = compare(actual, view, co);
  t.max_reference_bound = t.errors.max_reference_bound;
  t.regression_applies = regression_applies && judges.inputs_in_domain && t.baseline_not_finite == 0;
  auto fail = [&](std::string why) {
    t.verdict = Verdict::fail;
    t.reasons.push_back(std::move(why));
  };
  const std::string dtype(dtype_name(actual.dtype()));
  if (t.outside_envelope > 0)
    fail(std::to_string(t.outside_envelope) + " finite values without a rigorous bound outside the " + name +
         " envelope that needs none (docs/error-bounds.md, Not judged; first at element " +
         std::to_string(t.outside_envelope_index) + ")");
  if (!judges.inputs_in_domain) {
    // Accuracy is not promised here: NaN, inf and large errors are reported, not failed.
    if (t.verdict != Verdict::fail) t.verdict = Verdict::out_of_domain;
    t.regression = false;
    return t;
  }
  if (range.finite > 0)
    fail(std::to_string(range.finite) + " finite values where the exact " + name +
         " overflows " + dtype + ", beyond the rigorous bound (silent wrong answers)");
  if (t.errors.nonfinite_reference > 0)
    fail(std::to_string(t.errors.nonfinite_reference) + " reference values are not finite");
  if (t.errors.nan_mismatch > 0)
    fail(std::to_string(t.errors.nan_mismatch) + " NaN where the reference is not NaN");
  if (t.errors.inf_mismatch > 0)
    fail(std::to_string(t.errors.inf_mismatch) + " inf/finite mismatches");
  if (t.above_rigorous_bound > 0)
    fail(std::to_string(t.above_rigorous_bound) + " elements above the rigorous bound (error up to " +
         std::to_string(t.bound_ratio) + "x the bound)");
  t.regression = regression_applies && t.errors.above_bound > t.errors.nan_mismatch + t.errors.inf_mismatch;
  if (t.errors.loose_reference > 0)
    fail("reference bound not far below the tolerance at " +
         std::to_string(t.errors.loose_reference) + " elements");
  if (t.errors.count == 0 && range.beyond == 0 && t.inf_within_bound == 0) fail("no element was compared");
  if (t.verdict != Verdict::fail && range.beyond > 0) t.verdict = Verdict::out_of_domain;
  if (t.verdict == Verdict::pass && t.unbounded > 0) t.verdict = Verdict::not_judged;
  return t;
}

}  // namespace

static const OutputSample* wanted(const CaseContext& ctx) { return ctx.sample ? &*ctx.sample : nullptr; }

CheckRecord run_check(const Case& c, const CheckOptions& opt) {
  AttentionImpl* impl = find_implementation(c.impl);
  if (!impl) throw std::invalid_argument("unknown implementation '" + c.impl + "' (see `flashproof list`)");
  return run_check(c, *impl, opt);
}

CaseContext prepare_case(const Case& c, const CheckOptions& opt, bool with_baseline) {
  const Problem& p = c.problem;
  if (const std::string e = p.validate(); !e.empty()) throw std::invalid_argument(e);
  CaseContext ctx;
  auto t0 = Clock::now();
  ctx.inputs = generate_inputs(p, c.dist, c.seed);
  ctx.seconds_inputs = since(t0);
  t0 = Clock::now();
  const reference::DenseInputs dense(p, ctx.inputs.q, ctx.inputs.k, ctx.inputs.v, &ctx.inputs.dout);
  ctx.seconds_reference = since(t0);
  ctx.domain_note = domain_violation(p, dense);  // from the reference's copy of the inputs
  t0 = Clock::now();
  reference::Options ref_opt = opt.reference;
  ctx.sample = judged_sample(p, opt.reference.sample, opt.reference.sample_seed);
  ref_opt.plan = ctx.sample ? &*ctx.sample : nullptr;
  ref_opt.sample = 0;  // the plan, or every row and column
  ctx.reference = reference::forward_backward(dense, c.backward, ref_opt);
  ctx.seconds_reference += since(t0);
  if (with_baseline) {
    t0 = Clock::now();
    ctx.baseline = run_implementation(*find_implementation("naive"), p, c.backward, ctx.inputs, wanted(ctx));
    ctx.seconds_baseline = since(t0);
  }
  return ctx;
}

CheckRecord run_check(const Case& c, AttentionImpl& impl, const CheckOptions& opt) {
  if (const std::string e = c.problem.validate(); !e.empty()) throw std::invalid_argument(e);
  if (const std::string e = impl.unsupported_reason(c.problem, c.backward); !e.empty())
    throw std::invalid_argument(impl.name() + " does not support this case: " + e);
  return run_check(c, impl, prepare_case(c, opt), opt);
}

CheckRecord run_check(const Case& c, AttentionImpl& impl_ref, const CaseContext& ctx,
                      const CheckOptions& opt) {
  const Problem& p = c.problem;
  AttentionImpl* impl = &impl_ref;
  if (const std::string e = p.validate(); !e.empty()) throw std::invalid_argument(e);
  if (const std::string e = impl->unsupported_reason(p, c.backward); !e.empty())
    throw std::invalid_argument(impl->name() + " does not support this case: " + e);
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
    if (c.schedule == 0) return run_implementation(*impl, p, c.backward, in, wanted(ctx));
    const emu::ScopedSchedule explored(c.schedule);
    return run_implementation(*impl, p, c.backward, in, wanted(ctx));
  }();
  r.seconds_impl = since(t0);
  r.seconds_inputs = ctx.seconds_inputs;
  r.seconds_baseline = ctx.seconds_baseline;
  std::optional<Outputs> own_base;
  if (!ctx.baseline && impl != baseline) {
    t0 = Clock::now();
    own_base = run_implementation(*baseline, p, c.backward, in, wanted(ctx));
    r.seconds_baseline = since(t0);
  }
  const Outputs& base = ctx.baseline ? *ctx.baseline : own_base ? *own_base : out;

  const reference::ForwardResult& fwd = ctx.reference.forward;
  r.reference_stats = fwd.stats;
  t0 = Clock::now();
  // A flash-model backward forms D from the O it was given, the implementation's own (check.h).
  std::vector<double> d_error;
  if (c.backward && r.inputs_in_domain && impl->arithmetic_model() == ArithmeticModel::flash)
    d_error = d_error_of_given_o(p, out.o, fwd.o, in.dout);
  const bounds::ImplementationBounds rigorous = r.inputs_in_domain
      ? bounds::implementation_bounds(p, in, impl->arithmetic_model(), c.backward, opt.reference.threads,
                                      d_error.empty() ? nullptr : &d_error, impl->gqa_gradient_reduction(),
                                      wanted(ctx))
      : bounds::infinite_bounds(p, c.backward);
  // Elements rule 2 cannot judge (an infinite bound; every element outside the domain) are held to
  // the bound-free envelopes, computed only when a judged element needs one (a sample leaves the
  // others' bounds infinite).
  std::optional<Envelopes> envelopes;
  auto any_infinite = [](const std::vector<double>& v, const reference::CertifiedTensor& judged) {
    for (std::size_t x = 0; x < v.size(); ++x)
      if (judged.checked[x] && !std::isfinite(v[x])) return true;
    return false;
  };
  const reference::BackwardResult* bwd_ref = c.backward ? &*ctx.reference.backward : nullptr;
  if (!r.inputs_in_domain || any_infinite(rigorous.o, ctx.reference.forward.o) ||
      any_infinite(rigorous.lse, ctx.reference.forward.lse) ||
      (bwd_ref && (any_infinite(rigorous.dq, bwd_ref->dq) || any_infinite(rigorous.dk, bwd_ref->dk) ||
                   any_infinite(rigorous.dv, bwd_ref->dv))))
    envelopes = bound_free_envelopes(p, in, c.backward, opt.envelope_slack, opt.reference.threads);
  r.seconds_bounds = since(t0);
  t0 = Clock::now();
  auto judges = [&](const std::vector<double>& bound, Envelope Envelopes::*which,
                    const std::vector<std::uint8_t>* conditional = nullptr) {
    return TensorJudges{bound, conditional, envelopes ? &((*envelopes).*which) : nullptr, r.inputs_in_domain};
  };
  // Rule 3 judges O and the gradients only while the logits' fp32 rounding is small (check.h).
  const bool applies = max_finite_abs(fwd.lse.value) <=
                       opt.regression_lse_fraction * unit_roundoff(p.dtype) / 0x1p-24;
  r.tensors.push_back(check_tensor("O", out.o, base.o, fwd.o, judges(rigorous.o, &Envelopes::o), opt.k_forward,
                                   applies, opt));
  r.tensors.push_back(check_tensor("LSE", out.lse, base.lse, fwd.lse, judges(rigorous.lse, &Envelopes::lse),
                                   opt.k_forward, true, opt));
  if (c.backward) {
    const reference::BackwardResult& bwd = *ctx.reference.backward;
    r.reference_stats.fallback_rows += bwd.stats.fallback_rows;
    r.reference_stats.fallback_columns = bwd.stats.fallback_columns;
    r.reference_stats.columns_computed = bwd.stats.columns_computed;
    r.tensors.push_back(check_tensor("dQ", out.dq, base.dq, bwd.dq,
                                     judges(rigorous.dq, &Envelopes::dq, &rigorous.dq_conditional), opt.k_backward,
                                     applies, opt, &rigorous.dq_from_d_error));
    r.tensors.push_back(check_tensor("dK", out.dk, base.dk, bwd.dk,
                                     judges(rigorous.dk, &Envelopes::dk, &rigorous.dk_conditional), opt.k_backward,
                                     applies, opt, &rigorous.dk_from_d_error));
    r.tensors.push_back(check_tensor("dV", out.dv, base.dv, bwd.dv, judges(rigorous.dv, &Envelopes::dv),
                                     opt.k_backward, applies, opt));
  }
  r.seconds_checks = since(t0);

  // Exact results beyond the output dtype's range put the case out of the domain too (check.h).
  for (const TensorCheck& t : r.tensors)
    if (t.beyond_range > 0) {
      if (!r.domain_note.empty()) r.domain_note += "; ";
      r.domain_note += "exact " + t.name + " exceeds the " +
                       std::string(dtype_name(t.dtype)) +
                       " range at " + std::to_string(t.beyond_range) +
                       (t.beyond_range == 1 ? " element" : " elements");
    }
  r.in_domain = r.domain_note.empty();

  // fail before out-of-domain before not-judged before pass. Inputs outside the valid domain:
  // accuracy is not promised, so the case is reported apart unless a finite value left its envelope
  // (a silent wrong answer, forbidden there too: docs/error-bounds.md, Not judged).
  auto worst = [](Verdict a, Verdict b) {
    auto rank = [](Verdict v) {
      return v == Verdict::fail ? 3 : v == Verdict::out_of_domain ? 2 : v == Verdict::not_judged ? 1 : 0;
    };
    return rank(a) >= rank(b) ? a : b;
  };
  r.verdict = r.inputs_in_domain ? Verdict::pass : Verdict::out_of_domain;
  for (const TensorCheck& t : r.tensors) {
    r.verdict = worst(r.verdict, t.verdict);
    r.regression = r.regression || t.regression;
  }
  return r;
}

namespace {

std::string json_metrics(const ErrorMetrics& m) {
  std::ostringstream s;
  s << "{\"count\": " << m.count << ", \"max_abs\": " << json_number(m.max_abs)
    << ", \"max_rel\": " << json_number(m.max_rel) << ", \"rel_floor\": " << json_number(m.rel_floor)
    << ", \"normwise_rel\": " << json_number(m.normwise_rel)
    << ", \"max_ulps\": " << json_number(m.max_ulps) << ", \"ulps_unknown\": " << m.ulps_unknown
    << ", \"nan_mismatch\": " << m.nan_mismatch
    << ", \"inf_mismatch\": " << m.inf_mismatch << ", \"above_tolerance\": " << m.above_bound
    << ", \"nonfinite_reference\": " << m.nonfinite_reference << ", \"worst_index\": ["
    << m.worst_coord[0] << ", " << m.worst_coord[1] << ", " << m.worst_coord[2] << ", "
    << m.worst_coord[3] << "], \"worst_value\": " << json_number(m.worst_value)
    << ", \"worst_reference\": " << json_number(m.worst_reference) << "}";
  return s.str();
}

std::string short_number(double x) {
  std::ostringstream s;
  s << std::setprecision(3) << x;
  return s.str();
}

}  // namespace

std::string to_json(const CheckRecord& r) {
  const Problem& p = r.c.problem;
  std::ostringstream s;
  s << "{\n  \"case\": {\"impl\": " << json_quote(r.c.impl) << ", \"where\": "
    << json_quote(r.impl_where) << ", \"dtype\": " << json_quote(std::string(dtype_name(p.dtype)))
    << ", \"batch\": " << p.batch << ", \"heads_q\": " << p.heads_q
    << ", \"heads_kv\": " << p.heads_kv << ", \"seqlen_q\": " << p.seqlen_q
    << ", \"seqlen_k\": " << p.seqlen_k << ", \"head_dim\": " << p.head_dim
    << ", \"scale\": " << json_number(p.softmax_scale()) << ", \"window_left\": " << p.window_left
    << ", \"window_right\": " << p.window_right << ", \"dist\": "
    << json_quote(distribution_name(r.c.dist)) << ", \"seed\": " << r.c.seed;
  if (r.c.schedule != 0) s << ", \"schedule\": \"" << r.c.schedule << "\"";
  s << ", \"backward\": " << (r.c.backward ? "true" : "false") << "},\n";
  s << "  \"in_domain\": " << (r.in_domain ? "true" : "false")
    << ", \"inputs_in_domain\": " << (r.inputs_in_domain ? "true" : "false")
    << ", \"domain_note\": " << json_quote(r.domain_note) << ",\n";
  s << "  \"reference\": {\"backend\": " << json_quote(r.reference_backend)
    << ", \"sampling\": " << json_quote(r.reference_stats.sampling)
    << ", \"fallback_rows\": " << r.reference_stats.fallback_rows
    << ", \"fallback_columns\": " << r.reference_stats.fallback_columns;
  if (!r.sampled_rows.empty() || !r.sampled_columns.empty()) {
    auto list = [&](const char* key, const std::vector<std::int64_t>& v) {
      s << ",\n    \"" << key << "\": [";
      for (std::size_t x = 0; x < v.size(); ++x) s << (x ? ", " : "") << v[x];
      s << "]";
    };
    list("sampled_rows", r.sampled_rows);
    list("sampled_columns", r.sampled_columns);
  }
  s << "},\n";
  s << "  \"tensors\": [\n";
  for (std::size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorCheck& t = r.tensors[i];
    s << "    {\"name\": " << json_quote(t.name) << ", \"verdict\": "
      << json_quote(verdict_name(t.verdict)) << ", \"tolerance\": " << json_number(t.tolerance)
      << ", \"d_error_share\": " << json_number(t.d_error_share)
      << ", \"max_reference_bound\": " << json_number(t.max_reference_bound)
      << ", \"beyond_range\": " << t.beyond_range << ", \"overflow_as_inf\": " << t.overflow_as_inf
      << ", \"finite_beyond_range\": " << t.finite_beyond_range
      << ", \"finite_within_bound\": " << t.finite_within_bound
      << ", \"opposite_inf_within_bound\": " << t.opposite_inf_within_bound
      << ", \"regression_applies\": " << (t.regression_applies ? "true" : "false")
      << ", \"baseline_not_finite\": " << t.baseline_not_finite
      << ", \"regression\": " << (t.regression ? "true" : "false")
      << ",\n     \"rigorous_bound\": {\"above\": " << t.above_rigorous_bound
      << ", \"unbounded\": " << t.unbounded << ", \"conditional\": " << t.conditional
      << ", \"inf_within_bound\": " << t.inf_within_bound
      << ", \"max_bound\": " << json_number(t.max_rigorous_bound)
      << ", \"max_error_over_bound\": " << json_number(t.bound_ratio) << "}, \"not_judged\": " << t.unbounded
      << ", \"outside_envelope\": " << t.outside_envelope << ", \"reasons\": [";
    for (std::size_t k = 0; k < t.reasons.size(); ++k)
      s << (k ? ", " : "") << json_quote(t.reasons[k]);
    s << "],\n     \"errors\": " << json_metrics(t.errors)
      << ",\n     \"baseline_errors\": " << json_metrics(t.baseline_errors) << "}"
      << (i + 1 < r.tensors.size() ? "," : "") << "\n";
  }
  s << "  ],\n  \"seconds\": {\"impl\": " << json_number(r.seconds_impl)
    << ", \"reference\": " << json_number(r.seconds_reference)
    << ", \"bounds\": " << json_number(r.seconds_bounds) << "},\n";
  s << "  \"regression\": " << (r.regression ? "true" : "false") << ",\n";
  s << "  \"verdict\": " << json_quote(verdict_name(r.verdict)) << "\n}\n";
  return s.str();
}

std::string to_table(const CheckRecord& r) {
  std::ostringstream s;
  s << "case: " << r.c.impl << " (" << r.impl_where << ") " << r.c.problem.describe()
    << " dist=" << distribution_name(r.c.dist) << " seed=" << r.c.seed;
  if (r.c.schedule != 0) s << " schedule=" << r.c.schedule;
  s << (r.c.backward ? " forward+backward" : " forward") << "\n";
  s << "reference: " << r.reference_backend << ", sampling " << r.reference_stats.sampling
    << ", MPFR fallbacks " << r.reference_stats.fallback_rows << " rows / "
    << r.reference_stats.fallback_columns << " columns\n";
  if (!r.in_domain) s << "out of the valid domain: " << r.domain_note << "\n";
  s << std::left << std::setw(5) << "" << std::setw(13) << "max_abs" << std::setw(13)
    << "max_rel" << std::setw(10) << "max_ulps" << std::setw(13) << "baseline" << std::setw(13)
    << "tolerance" << std::setw(11) << "bound" << std::setw(10) << "err/bound" << std::setw(11)
    << "ref_bound" << std::setw(9) << "nan/inf" << "verdict\n";
  s << std::setprecision(3);
  for (const TensorCheck& t : r.tensors) {
    s << std::setw(5) << t.name << std::setw(13) << t.errors.max_abs << std::setw(13)
      << t.errors.max_rel << std::setw(10)
      << (t.errors.ulps_unknown > 0 && t.errors.max_ulps == 0 ? std::string("n/a") : short_number(t.errors.max_ulps))
      << std::setw(13)
      << (t.baseline_not_finite > 0 ? std::string("not finite") : short_number(t.baseline_errors.max_abs)) << std::setw(13)
      << (t.regression_applies ? short_number(t.tolerance) : std::string("(n/a)"))
      << std::setw(11) << (t.unbounded > 0 && t.max_rigorous_bound == 0 ? std::string("none") : short_number(t.max_rigorous_bound))
      << std::setw(10) << (t.unbounded > 0 && t.max_rigorous_bound == 0 ? std::string("-") : short_number(t.bound_ratio))
      << std::setw(11)
      << t.max_reference_bound << std::setw(9)
      << (std::to_string(t.errors.nan_mismatch) + "/" + std::to_string(t.errors.inf_mismatch))
      << verdict_name(t.verdict) << "\n";
    for (const std::string& why : t.reasons) s << "       " << why << "\n";
    if (t.unbounded > 0)
      s << "       not judged: " << t.unbounded << " elements have no rigorous bound; only their bound-free envelope "
        << "was checked (" << t.outside_envelope << " outside it)\n";
    if (t.errors.ulps_unknown > 0)
      s << "       max_ulps leaves out " << t.errors.ulps_unknown << " elements where the reference's bound spans "
        << "more than one " << dtype_name(t.dtype) << " step (the exact value's rounding is not settled there)\n";
    if (t.conditional > 0)
      s << "       " << t.conditional << " elements judged by a bound that holds where no intermediate overflowed "
        << "(a finite result certifies it)\n";
    if (t.baseline_not_finite > 0)
      s << "       rule 3 n/a: the naive baseline is NaN or inf at " << t.baseline_not_finite
        << " elements where the exact value is finite (no error to compare with)\n";
    if (t.regression)
      s << "       accuracy regression (rule 3, reported, not failing here): error above the tolerance, k x "
        << "the naive baseline's error" << (t.d_error_share > 0 ? " (+ the given O's share of D, " + short_number(t.d_error_share) + ")" : "")
        << " + floor\n";
    if (t.inf_within_bound > 0)
      s << "       " << t.inf_within_bound << " infinities where the exact value is finite but the "
        << "rigorous bound reaches beyond the " << dtype_name(t.dtype) << " range (admitted)\n";
    if (t.beyond_range > 0)
      s << "       exact value beyond the " << dtype_name(t.dtype)
        << " range at " << t.beyond_range << " elements: " << t.overflow_as_inf
        << " returned as the signed inf, "
        << (t.opposite_inf_within_bound > 0
                ? std::to_string(t.opposite_inf_within_bound) +
                      " as the other sign's inf within the rigorous bound (admitted), "
                : std::string())
        << t.finite_within_bound << " finite within the rigorous bound (admitted), "
        << t.finite_beyond_range << " finite beyond it\n";
  }
  s << "rules applied: no NaN/inf where the reference is finite; every element within its "
       "rigorous bound (docs/error-bounds.md Part 2; 'bound' is the largest, 'err/bound' the "
       "largest ratio); reported, not failing (the property suite fails on it): error <= k x "
       "(naive baseline + for dQ, dK of a flash backward the given O's share of D) + floor (k = 2 "
       "forward, 3 backward; n/a: O and the gradients where "
       "|LSE| is beyond the rule's range, and a tensor where the baseline is not finite); reference finite and its bound far below the tolerance; where the exact value overflows the dtype, the signed inf is accepted, a "
       "finite value or the other inf fails unless it is within the rigorous bound, and the tensor is "
       "out-of-domain; where no rigorous bound exists (outside the domain: everywhere), a finite value "
       "must lie in its bound-free envelope (O in the hull of the visible V rows, LSE between the largest "
       "logit and it plus log n, |dV|, |dQ|, |dK| below what P <= 1 allows) and is otherwise not judged.\n";
  s << "verdict: " << verdict_name(r.verdict) << (r.regression ? " (accuracy regression reported)" : "") << "\n";
  return s.str();
}

}  // namespace flashproof
