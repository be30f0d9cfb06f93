// The harness verdicts as properties: the differential verdict (every element within its rigorous
// bound) and the accuracy regression against the naive baseline (harness/check.h).
#include <cstdint>
#include <optional>
#include <string>

#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {

Outcome differential(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  for (const TensorCheck& t : r->tensors) {
    const std::uint64_t bad = t.errors.nan_mismatch + t.errors.inf_mismatch;
    if (bad > 0)
      return fail(t.name + ": " + std::to_string(bad) + " NaN/inf where the reference is finite (or the reverse)");
    if (t.finite_beyond_range > 0)
      return fail(t.name + ": " + std::to_string(t.finite_beyond_range) +
                  " finite values where the exact result overflows, beyond the rigorous bound");
    if (t.above_rigorous_bound > 0)
      return fail(t.name + ": " + std::to_string(t.above_rigorous_bound) + " elements above the rigorous bound (error up to " +
                  exact(t.bound_ratio) + " x the bound, largest bound " + exact(t.max_rigorous_bound) + ")");
    if (t.errors.count == 0 && t.beyond_range == 0) return fail(t.name + ": no element was compared");
  }
  return holds_with(r->in_domain ? "in domain" : "result beyond the dtype's range");
}

Outcome accuracy_regression(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  std::string skipped;
  for (const TensorCheck& t : r->tensors) {
    if (!t.regression_applies) {
      if (t.baseline_not_finite > 0) skipped = "the naive baseline is not finite";
      else if (skipped.empty()) skipped = "|LSE| beyond the rule's range";
      continue;
    }
    if (t.errors.above_bound > t.errors.nan_mismatch + t.errors.inf_mismatch)
      return fail(t.name + ": max error " + exact(t.errors.max_abs) + " above " + exact(t.tolerance) +
                  " (k x (naive baseline error " + exact(t.baseline_errors.max_abs) +
                  (t.d_error_share > 0 ? " + the given O's share of D " + exact(t.d_error_share) : std::string()) +
                  ") + rounding floor)");
  }
  if (!skipped.empty()) return holds_with("some tensors not judged: " + skipped);
  return holds_with(r->in_domain ? "in domain" : "result beyond the dtype's range");
}

}  // namespace flashproof::properties::checks
