// FA1 against FA2 on the same inputs: the outputs within kFa1Fa2AgreementFloors rounding floors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "kernels/registry.h"
#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties {
namespace {

// The largest |a - b|; infinite when they disagree on NaN or on an infinity (equal infinities
// agree: LSE = +inf of an empty row).
double max_difference(const HostTensor& a, const HostTensor& b) {
  double worst = 0;
  for_each_index(a, [&](const Index& i) {
    const double x = value_at(a, i), y = value_at(b, i);
    if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
      if (!(x == y)) worst = std::numeric_limits<double>::infinity();
      return;
    }
    worst = std::max(worst, std::fabs(x - y));
  });
  return worst;
}

}  // namespace

Outcome matches_fa2(AttentionImpl& impl, const Case& c, const CheckRecord& record) {
  AttentionImpl* fa2 = find_implementation("fa2");
  if (fa2 == nullptr || !refusal(*fa2, c.problem, c.backward).empty()) return holds_with("not judged (no fa2)");
  const Inputs in = inputs_of(c);
  const Outputs a = run_implementation(impl, c.problem, c.backward, in);
  const Outputs b = run_implementation(*fa2, c.problem, c.backward, in);
  const std::pair<const HostTensor*, const HostTensor*> pairs[] = {
      {&a.o, &b.o}, {&a.lse, &b.lse}, {&a.dq, &b.dq}, {&a.dk, &b.dk}, {&a.dv, &b.dv}};
  for (std::size_t t = 0; t < record.tensors.size(); ++t) {
    const TensorCheck& check = record.tensors[t];
    const double difference = max_difference(*pairs[t].first, *pairs[t].second);
    if (!(difference <= kFa1Fa2AgreementFloors * check.errors.rel_floor))
      return fail(check.name + ": " + impl.name() + " and fa2 differ by " + exact(difference) + " = " +
                  exact(difference / check.errors.rel_floor) + " rounding floors (allowed " +
                  exact(kFa1Fa2AgreementFloors) + ")");
  }
  return {};
}

namespace checks {

Outcome fa1_matches_fa2(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  return matches_fa2(impl, c, *r);
}

}  // namespace checks
}  // namespace flashproof::properties
