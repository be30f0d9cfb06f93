// Domain<z3::expr>: the algorithm pieces of kernels/algo/ instantiated with Z3 terms, so the proofs
// reason about the shipped source. One specialisation serves three sorts:
// - Int: block ranges and mask predicates, exact mathematical integers;
// - Real: exact arithmetic; exp2 and ln are uninterpreted functions constrained by ground axiom
//   instances stated in each proof; there is no -inf, and +inf (LSE of an empty row) is an opaque
//   constant;
// - FloatingPoint (fp32): IEEE arithmetic with round-to-nearest-even; exp2 and ln are
//   uninterpreted, constrained per application by the stated properties of the hardware
//   approximation (fp32_function_axioms.h).
#pragma once

#include <z3++.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/algo/domain.h"

namespace flashproof::algo {

template <>
struct Domain<z3::expr> {
  static z3::expr lit(double v, const z3::expr& like) {
    z3::context& c = like.ctx();
    if (like.is_fpa()) return c.fpa_val(static_cast<float>(v));
    if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
      const auto n = static_cast<long long>(v);
      return like.is_int() ? c.int_val(static_cast<int64_t>(n)) : c.real_val(static_cast<int64_t>(n));
    }
    // Exact value of a non-integral double: mantissa / 2^k.
    int exponent = 0;
    const double mantissa = std::frexp(v, &exponent);
    const auto scaled = static_cast<int64_t>(std::ldexp(mantissa, 53));
    const int k = 53 - exponent;
    if (k <= 0 || k > 62) throw std::invalid_argument("Domain<z3::expr>::lit: value out of range");
    return c.real_val(scaled) / c.real_val(int64_t{1} << k);
  }
  static z3::expr select(const z3::expr& cond, const z3::expr& a, const z3::expr& b) { return z3::ite(cond, a, b); }
  static z3::expr min(const z3::expr& a, const z3::expr& b) {
    if (a.is_fpa()) return z3::min(a, b);
    return z3::ite(a <= b, a, b);
  }
  static z3::expr max(const z3::expr& a, const z3::expr& b) {
    if (a.is_fpa()) return z3::max(a, b);
    return z3::ite(a >= b, a, b);
  }
  static z3::expr mul(const z3::expr& a, const z3::expr& b) { return a * b; }
  static z3::expr div(const z3::expr& a, const z3::expr& b) { return a / b; }
  static z3::expr exp2(const z3::expr& x) { return unary("exp2", x); }
  static z3::expr log(const z3::expr& x) { return unary("ln", x); }
  static z3::expr tanh(const z3::expr& x) { return unary("tanh", x); }
  static z3::expr is_neg_inf(const z3::expr& x) {
    if (x.is_fpa()) return x.mk_is_inf() && z3::expr(x.ctx(), Z3_mk_fpa_is_negative(x.ctx(), x));
    return x.ctx().bool_val(false);
  }
  static z3::expr is_zero(const z3::expr& x) {
    if (x.is_fpa()) return x.mk_is_zero();
    return x == lit(0, x);
  }
  static z3::expr pos_inf(const z3::expr& like) {
    if (like.is_fpa()) return like.ctx().fpa_inf(like.get_sort(), false);
    return like.ctx().constant("lse_of_empty_row", like.get_sort());
  }

  // The uninterpreted function `name` on x's sort. Same name and sort give the same declaration,
  // so a proof finds every application by name (see axioms in each proof).
  static z3::expr unary(const char* name, const z3::expr& x) {
    z3::func_decl f = x.ctx().function(name, x.get_sort(), x.get_sort());
    return f(x);
  }
};

}  // namespace flashproof::algo
