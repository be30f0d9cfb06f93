#include "harness/baseline_rule.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/metrics.h"
#include "harness/verdict.h"

namespace flashproof {

double given_lse_share(const HostTensor& lse_given, const reference::CertifiedTensor& lse_ref,
                       const reference::CertifiedTensor& grad) {
  double delta = 0;
  lse_given.for_each_value([&](std::size_t x, double v) {
    const double r = lse_ref.value[x];
    if (!lse_ref.checked[x] || !std::isfinite(r)) return;
    const double d = std::isfinite(v) ? std::fabs(v - r) + lse_ref.bound[x] + 2.5 * 0x1p-24 * std::fabs(r) : INFINITY;
    delta = std::max(delta, d);
  });
  double size = 0;
  for (std::size_t x = 0; x < grad.magnitude.size(); ++x)
    if (grad.checked[x] && std::isfinite(grad.magnitude[x])) size = std::max(size, grad.magnitude[x]);
  return size > 0 ? std::expm1(delta) * size : 0.0;
}

void apply_baseline_rule(TensorCheck& t, const HostTensor& dtype_out, const reference::CertifiedTensor& ref,
                         const bounds::Envelope& envelope, const CheckOptions& opt, double k,
                         double lse_share) {
  if (t.verdict != Verdict::not_judged) return;
  CompareOptions co;
  co.rel_floor = t.floor;
  co.checked = &ref.checked;
  const ErrorMetrics base = compare(dtype_out, ReferenceView{&ref.value, &ref.bound}, co);
  TensorCheck::BaselineRule& b = t.baseline_rule;
  b.dtype_baseline_max_abs = base.max_abs;
  b.dtype_baseline_not_finite = base.nan_mismatch + base.inf_mismatch;
  if (b.dtype_baseline_not_finite > 0) return;  // no size to measure against
  b.applied = true;
  b.lse_share = lse_share;
  // The computation in the dtype has more than one order (FlashAttention's reference scales q or k
  // first): where a few roundings make the error, one order can be luckier than another by more than
  // k. The larger of the two the check ran, this one and the naive baseline's (fp32 scores, scaled
  // after the product), where that is finite: an fp32 case at logits near 1e3 had the naive
  // baseline itself fail against the dtype-scores order alone (dQ 2.5e-4 against 3 x 4.4e-5).
  const double base_error = std::max(base.max_abs, t.baseline_not_finite == 0 ? t.baseline_errors.max_abs : 0.0);
  b.tolerance = k * (base_error + t.d_error_share + lse_share) + t.floor;
  const double size = exact_tensor_size(ref, ref.checked, opt.vacuous_magnitude_fraction);
  double narrowest = INFINITY;
  for (std::size_t x = 0; x < ref.value.size(); ++x)
    if (ref.checked[x] && std::isfinite(ref.value[x]) && x < envelope.hi.size())
      narrowest = std::min(narrowest, envelope.hi[x] - envelope.lo[x]);
  // Like a vacuous bound (verdict.cpp), a vacuous tolerance still fails what lies beyond it, but
  // what lies within it stays not judged.
  b.vacuous = !(b.tolerance < (size > 0 ? size : opt.vacuous_envelope_fraction * narrowest));
  if (t.inf_within_vacuous_bound > 0) {
    // An infinity for a finite exact value, which the finite dtype computation did not return: its
    // error exceeds any finite tolerance (the first tier admitted it under a bound judging nothing).
    t.verdict = Verdict::fail_baseline_rule;
    t.reasons.push_back("second tier: " + std::to_string(t.inf_within_vacuous_bound) +
                        " infinities where the exact value and the dtype computation are finite "
                        "(docs/spec.md \"Verdicts\")");
    return;
  }
  if (t.errors.max_abs <= b.tolerance) {
    if (!b.vacuous) t.verdict = Verdict::pass_baseline_rule;
    return;
  }
  t.verdict = Verdict::fail_baseline_rule;
  t.reasons.push_back("second tier: error " + std::to_string(t.errors.max_abs) + " above the baseline rule's " +
                      std::to_string(b.tolerance) + " (" + std::to_string(k) + " x the dtype computation's " +
                      std::to_string(base_error) + " + floor; docs/spec.md \"Verdicts\")");
}

}  // namespace flashproof
