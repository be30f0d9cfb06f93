// The soft cap and ALiBi as properties (docs/spec.md "Soft cap and ALiBi"): the harness verdicts
// on the case with a cap and slopes drawn from its seed, and a cap so large that it is no cap.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/logit_scan.h"
#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/generators.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {
namespace {

// |a - b| <= bound elementwise, where the bound is finite; NaN or inf in one only fails.
std::string apart(const char* name, const HostTensor& a, const HostTensor& b, const std::vector<double>& bound_a,
                  const std::vector<double>& bound_b, int rank) {
  std::string why;
  std::size_t at = 0;
  for_each_index(a, [&](const Index& i) {
    const std::size_t k = at++;
    if (!why.empty()) return;
    const double x = value_at(a, i), y = value_at(b, i), allowed = bound_a[k] + bound_b[k];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (!(x == y || (std::isnan(x) && std::isnan(y))) && std::isfinite(allowed))
        why = std::string(name) + " at " + where(name, i, rank) + ": " + exact(x) + " capped vs " + exact(y) + " uncapped";
      return;
    }
    // The exact results differ by less than 2^-100 of either (see below).
    if (std::fabs(x - y) > allowed + 0x1p-100 * (std::fabs(x) + std::fabs(y)))
      why = std::string(name) + " at " + where(name, i, rank) + ": " + exact(x) + " capped vs " + exact(y) +
            " uncapped, more apart than their two rigorous bounds (" + exact(allowed) + ")";
  });
  return why;
}

}  // namespace

Outcome score_mod_differential(AttentionImpl& impl, const Case& c) {
  const Case m = with_score_mod(impl, c);
  Outcome o = differential(impl, m);
  if (!o.holds) o.why = m.problem.describe() + ": " + o.why;
  return o;
}

// A cap of 2^100 is no cap: where every |scale q.k| <= 2^30, each capped logit differs from the
// uncapped one by |s|^3 / (3 c^2) <= 2^-111, and the exact results by less than 2^-100 of
// themselves. So the implementation's capped and uncapped runs on the same inputs are at most their
// two rigorous bounds apart (each lies within its own of nearly the same exact result).
Outcome softcap_infinity(AttentionImpl& impl, const Case& c) {
  Case plain = c, capped = c;
  plain.problem.softcap.reset();
  capped.problem.softcap = 0x1p100f;
  const Inputs in = inputs_of(plain);
  if (scan_logits(plain.problem, in.q, in.k, 0x1p30).beyond_limit) return holds_with("not judged (logits beyond 2^30)");
  std::string note;
  const bounds::ImplementationBounds b0 =
      rigorous_bounds(plain, impl.arithmetic_model(), impl.gqa_gradient_reduction(), {}, &note,
                      impl.backward_recomputes_forward_logits());
  if (!note.empty()) return holds_with("inputs out of domain");
  const bounds::ImplementationBounds b1 = rigorous_bounds(capped, impl.arithmetic_model(), impl.gqa_gradient_reduction(),
                                                         {}, nullptr, impl.backward_recomputes_forward_logits());
  const Outputs x = run_implementation(impl, capped.problem, c.backward, in);
  const Outputs y = run_implementation(impl, plain.problem, c.backward, in);
  if (std::string w = apart("O", x.o, y.o, b1.o, b0.o, 4); !w.empty()) return fail(w);
  if (std::string w = apart("LSE", x.lse, y.lse, b1.lse, b0.lse, 3); !w.empty()) return fail(w);
  if (!c.backward) return {};
  if (std::string w = apart("dQ", x.dq, y.dq, b1.dq, b0.dq, 4); !w.empty()) return fail(w);
  if (std::string w = apart("dK", x.dk, y.dk, b1.dk, b0.dk, 4); !w.empty()) return fail(w);
  if (std::string w = apart("dV", x.dv, y.dv, b1.dv, b0.dv, 4); !w.empty()) return fail(w);
  return {};
}

}  // namespace flashproof::properties::checks
