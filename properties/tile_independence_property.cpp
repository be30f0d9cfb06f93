// Tile independence: the implementation with its alternate tile shapes against the shipped ones,
// within the rigorous bound (bounds/implementation_bounds.h).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bounds/implementation_bounds.h"
#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {

// The implementation with its alternate tile shapes passes the differential verdict, and where
// both runs are finite they differ by at most B_shipped + B_alternate = 2B per element (both hold
// the same bound B of the same arithmetic model): a reference-free check that block sizes, warp
// counts and so summation orders and rescale points change results only within the bound.
// Infinities and NaN are the differential verdict's to judge.
Outcome tile_independence(AttentionImpl& impl, const Case& c) {
  const std::unique_ptr<AttentionImpl> alternate = impl.with_alternate_tiles();
  if (alternate == nullptr) return fail(impl.name() + " offers no alternate tile shapes");
  if (std::string why = refusal(*alternate, c.problem, c.backward); !why.empty())
    return fail("the alternate tiles refuse a case the shipped ones take: " + why);
  const Outcome alone = differential(*alternate, c);
  if (!alone.holds) return fail(alternate->name() + ": " + alone.why);
  if (alone.tags == std::vector<std::string>{"inputs out of domain"}) return alone;  // nothing judged
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const Outputs a = run_implementation(impl, p, c.backward, in);
  const Outputs b = run_implementation(*alternate, p, c.backward, in);
  const bounds::ImplementationBounds bound = bounds::implementation_bounds(p, in, impl.arithmetic_model(), c.backward);
  const std::tuple<const char*, const HostTensor*, const HostTensor*, const std::vector<double>*> tensors[] = {
      {"O", &a.o, &b.o, &bound.o}, {"LSE", &a.lse, &b.lse, &bound.lse}, {"dQ", &a.dq, &b.dq, &bound.dq},
      {"dK", &a.dk, &b.dk, &bound.dk}, {"dV", &a.dv, &b.dv, &bound.dv}};
  double worst_ratio = 0;
  bool bitwise = true;
  for (const auto& tensor : tensors) {
    // Named copies, not a structured binding: the lambda below captures them (clang 14 cannot).
    const char* name = std::get<0>(tensor);
    const HostTensor* x = std::get<1>(tensor);
    const HostTensor* y = std::get<2>(tensor);
    const std::vector<double>* limit = std::get<3>(tensor);
    if (limit->empty()) continue;  // no backward
    std::string why;
    std::size_t at = 0;
    for_each_index(*x, [&](const Index& i) {
      const double u = value_at(*x, i), v = value_at(*y, i), allowed = 2 * (*limit)[at++];
      bitwise = bitwise && bits_at(*x, i) == bits_at(*y, i);
      if (!why.empty() || !std::isfinite(u) || !std::isfinite(v) || u == v) return;
      const double d = std::fabs(u - v);
      if (!(d <= allowed))
        why = std::string(name) + ": shipped " + exact(u) + " and alternate tiles " + exact(v) + " at " +
              where(name, i, x->rank()) + " differ by " + exact(d) + ", more than 2 x the bound " + exact(allowed / 2);
      else if (allowed > 0)
        worst_ratio = std::max(worst_ratio, d / allowed);
    });
    if (!why.empty()) return fail(why);
  }
  if (bitwise) return holds_with("bitwise equal");
  return holds_with(worst_ratio > 0.25 ? "differ by > 1/4 of 2B" : "differ by <= 1/4 of 2B");
}

}  // namespace flashproof::properties::checks
