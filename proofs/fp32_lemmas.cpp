#include "proofs/fp32_lemmas.h"

#include <stdexcept>

#include "proofs/fp32_function_axioms.h"
#include "proofs/term_walk.h"

namespace flashproof::proofs::fp32 {
namespace {

// A nonnegative value scaled by a weight in [0,1]: +0 or positive, at most 4 times the value's bound
// (a bound on exponents only; the tight bound "at most the value" costs 20x more), exact for
// weights 1 and +0. Two bounds, for values and for products of values.
expr scaled_by_weight(const expr& weight, const expr& value, const expr& product) {
  z3::context& c = weight.ctx();
  const auto bounded = [&](float v_bound) {
    return z3::implies(value <= f32(c, v_bound), product <= f32(c, 4 * v_bound));
  };
  return z3::implies(in_unit(weight) && nonnegative(value) && is_finite(value),
                     nonnegative(product) && bounded(0x1p100f) && bounded(0x1p110f) &&
                         z3::implies(is_one(weight), product == value) &&
                         z3::implies(plus_zero(weight), plus_zero(product)));
}

// The reciprocal of a finite l >= 1 lies in (0, 1].
expr reciprocal_in_unit(const expr& l, const expr& inv) {
  return z3::implies(is_finite(l) && f32(l.ctx(), 1.0f) <= l, in_unit(inv) && !inv.mk_is_zero());
}

// a - b for a <= b and b finite: not NaN, <= 0, -inf for a = -inf, a zero for a = b.
expr nonpositive_difference(const expr& a, const expr& b, const expr& difference) {
  return z3::implies(is_finite(b) && !is_nan(a) && a <= b,
                     !is_nan(difference) && difference <= f32(a.ctx(), 0.0f) &&
                         z3::implies(is_neg_inf(a), is_neg_inf(difference)) &&
                         z3::implies(a == b, difference.mk_is_zero()));
}

}  // namespace

std::optional<expr> lemma_instance(Lemma lemma, const expr& e) {
  if (e.num_args() != 3 || !z3::eq(e.arg(0), e.ctx().fpa_rounding_mode())) return std::nullopt;
  switch (lemma) {
    case Lemma::weight_times_value:
      if (is_op(e, Z3_OP_FPA_MUL)) return scaled_by_weight(e.arg(1), e.arg(2), e);
      break;
    case Lemma::value_times_weight:
      if (is_op(e, Z3_OP_FPA_MUL)) return scaled_by_weight(e.arg(2), e.arg(1), e);
      break;
    case Lemma::reciprocal:
      if (is_op(e, Z3_OP_FPA_DIV) && z3::eq(e.arg(1), f32(e.ctx(), 1.0f))) return reciprocal_in_unit(e.arg(2), e);
      break;
    case Lemma::difference:
      if (is_op(e, Z3_OP_FPA_SUB)) return nonpositive_difference(e.arg(1), e.arg(2), e);
      break;
  }
  return std::nullopt;
}

Obligation lemma_obligation(z3::context& c, Lemma lemma) {
  const expr a = f32_var(c, "a");
  const expr b = f32_var(c, "b");
  switch (lemma) {
    case Lemma::weight_times_value:
      return obligation("lemma: a*b for a in [0,1], b >= 0 finite: >= 0, <= 4*bound(b), exact for a = 1, +0", {},
                        scaled_by_weight(a, b, D::mul(a, b)));
    case Lemma::value_times_weight:
      return obligation("lemma: b*a for a in [0,1], b >= 0 finite: >= 0, <= 4*bound(b), exact for a = 1, +0", {},
                        scaled_by_weight(a, b, D::mul(b, a)));
    case Lemma::reciprocal:
      return obligation("lemma: 1/a in (0,1] for finite a >= 1", {}, reciprocal_in_unit(a, D::div(f32(c, 1.0f), a)));
    case Lemma::difference:
      return obligation("lemma: a - b for a <= b, b finite: not NaN, <= 0, -inf for a = -inf, 0 for a = b", {},
                        nonpositive_difference(a, b, a - b));
  }
  throw std::logic_error("unknown lemma");
}

}  // namespace flashproof::proofs::fp32
