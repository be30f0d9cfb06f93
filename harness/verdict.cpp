#include "harness/verdict.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace flashproof {

namespace {

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

// The size at which a rigorous bound stops judging, per element: the tensor's exact size among the
// compared elements (exact_tensor_size: the larger of its largest |r| and `magnitude_fraction` of its
// summands' size, less the reference bound). A bound that reaches |r| admits 0 and twice the exact
// value; one well below the summands' size still judges where they cancel (dQ and dK of a peaked
// softmax, exactly 0 for a one-hot one), since no evaluation can do better than a rounding of them,
// but one of their whole size admits any sum of them. Where every magnitude is 0, `fraction` of the
// element's envelope width, what any attention of these inputs could return. Never below 16 of
// the dtype's smallest subnormal steps: a tensor of values that small (subnormal inputs) is judged
// as finely as the dtype can hold it. An element without a finite envelope (never inside the
// domain), or a check without envelopes: the dtype's largest finite value, as before the envelopes.
class VacuousAt {
 public:
  VacuousAt(DType t, const reference::CertifiedTensor& ref, const ComparedMask& compared,
            const bounds::Envelope* envelope, double fraction, double magnitude_fraction)
      : envelope_(envelope), fraction_(fraction) {
    const double size = exact_tensor_size(ref, compared.get(), magnitude_fraction);
    exact_zero_ = !(size > 0);
    size_ = std::max(size, 16 * from_bits(t, 1));
    largest_ = from_bits(t, to_bits(t, 0x1p200) - 1);
  }
  double operator()(std::size_t x) const {
    if (!exact_zero_) return size_;
    const double width = envelope_ ? envelope_->hi[x] - envelope_->lo[x] : INFINITY;
    return std::isfinite(width) ? std::max(size_, fraction_ * width) : largest_;
  }

 private:
  const bounds::Envelope* envelope_;
  double fraction_, size_ = 0, largest_ = 0;
  bool exact_zero_ = false;
};

// Rule 2 over the compared elements, in one pass over the output: the error, less the
// reference's own bound, against the implementation's rigorous bound. NaN and inf pairs are left to
// the mismatch rules, except that an infinity where the exact result is finite is within rule 2
// when the bound reaches beyond the dtype's range on that side (r +- (B + reference bound) rounds
// to that infinity): a correct implementation may round there. Such elements leave the comparison
// (so they are not inf mismatches) and are counted. Elements whose exact value is itself beyond
// the range keep the range rules (an inf of the wrong sign fails there).
// Every compared finite value is held to its bound-free envelope (bounds/envelope.h), whatever
// its bound: counted in outside_envelope, a failure of its own rule. A finite value without a
// finite bound is not judged by rule 2: it is counted (unbounded). Nor is one whose bound is
// vacuous (VacuousAt): it is still held to rule 2 and
// counted (vacuous). A finite bound flagged conditional (the model's intermediates may overflow)
// is counted as such.
void judge_rigorous(TensorCheck& t, const HostTensor& actual, const reference::CertifiedTensor& ref,
                    const std::vector<double>& bound, const std::vector<std::uint8_t>& cls,
                    ComparedMask& compared, const bounds::Envelope* envelope,
                    const std::vector<std::uint8_t>* conditional, const CheckOptions& opt) {
  const DType dt = actual.dtype();
  const VacuousAt vacuous_at(dt, ref, compared, envelope, opt.vacuous_envelope_fraction,
                             opt.vacuous_magnitude_fraction);
  actual.for_each_value([&](std::size_t x, double a) {
    if (!compared[x]) return;
    const double r = ref.value[x], b = bound[x];
    if (std::isfinite(a) && envelope && envelope->outside(x, a)) {
      if (t.outside_envelope++ == 0) t.outside_envelope_index = static_cast<std::int64_t>(x);
    }
    if (std::isfinite(a) && !std::isfinite(b)) {
      ++t.unbounded;
      return;
    }
    if (!std::isfinite(a)) {
      const bool in_range = cls.empty() || cls[x] == kInRange;
      if (in_range && std::isinf(a) && std::isfinite(r) && std::isfinite(b)) {
        const double reach = b + ref.bound[x];
        if (round_to(dt, a > 0 ? r + reach : r - reach) == a) {
          compared.remove(x);
          ++t.inf_within_bound;
          // Admitted by a bound that judges nothing: not judged, like a finite value there.
          if (b >= vacuous_at(x)) ++t.vacuous, ++t.inf_within_vacuous_bound;
        }
      }
      return;
    }
    if (!std::isfinite(r)) return;
    if (b >= vacuous_at(x)) ++t.vacuous;
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

}  // namespace

double exact_tensor_size(const reference::CertifiedTensor& ref, const std::vector<std::uint8_t>& compared,
                         double magnitude_fraction) {
  double size = 0;
  for (std::size_t x = 0; x < ref.value.size(); ++x) {
    if (!compared[x] || !std::isfinite(ref.value[x])) continue;
    const double summands = x < ref.magnitude.size() && std::isfinite(ref.magnitude[x]) ? ref.magnitude[x] : 0.0;
    size = std::max(size, std::max(std::fabs(ref.value[x]), magnitude_fraction * summands) - ref.bound[x]);
  }
  return size;
}

TensorCheck check_tensor(const std::string& name, const HostTensor& actual,
                         const HostTensor& baseline, const reference::CertifiedTensor& ref,
                         const TensorJudges& judges, double k, bool regression_applies,
                         const CheckOptions& opt, const std::vector<double>* from_d_error) {
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
  judge_rigorous(t, actual, ref, rigorous, cls, compared, judges.envelope, judges.conditional, opt);
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
  t.floor = floor;
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
    fail(std::to_string(t.outside_envelope) + " finite values outside the bound-free envelope (" +
         bounds::envelope_rule(name) + "; docs/error-bounds.md; first at element " +
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
  if (t.verdict == Verdict::pass && t.unbounded + t.vacuous > 0) t.verdict = Verdict::not_judged;
  return t;
}


bool regression_rule_applies(const std::vector<double>& lse, DType dtype, const CheckOptions& opt) {
  return max_finite_abs(lse) <= opt.regression_lse_fraction * unit_roundoff(dtype) / 0x1p-24;
}

void judge_case(CheckRecord& r) {
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
  auto worst = [](Verdict a, Verdict b) { return verdict_rank(a) >= verdict_rank(b) ? a : b; };
  r.verdict = r.inputs_in_domain ? Verdict::pass : Verdict::out_of_domain;
  for (const TensorCheck& t : r.tensors) {
    r.verdict = worst(r.verdict, t.verdict);
    r.regression = r.regression || t.regression;
  }
}

}  // namespace flashproof
