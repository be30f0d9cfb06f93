// Ground instances of the laws of exp2 and ln over the reals, used by the exact-arithmetic proofs.
// Each instance carries its own arithmetic precondition (a + b = c, x > 0, ...) as an implication,
// so it is a true statement whatever terms it is instantiated with; no quantifiers are needed, which
// Z3 4.8.12 handles badly for exp (it loops on a quantified exp(a + b) = exp(a) exp(b)).
#pragma once

#include <z3++.h>

#include "proofs/z3_domain.h"

namespace flashproof::proofs {

using RealDomain = algo::Domain<z3::expr>;

inline z3::expr exp2_of(const z3::expr& x) { return RealDomain::exp2(x); }
inline z3::expr ln_of(const z3::expr& x) { return RealDomain::log(x); }

// 2^a * 2^b = 2^c whenever a + b = c.
inline z3::expr exp2_add(const z3::expr& a, const z3::expr& b, const z3::expr& c) {
  return z3::implies(a + b == c, exp2_of(a) * exp2_of(b) == exp2_of(c));
}

// 2^x > 0; 2^x > 1 for x > 0; 2^0 = 1.
inline z3::expr exp2_positive(const z3::expr& x) { return exp2_of(x) > 0; }
inline z3::expr exp2_above_one(const z3::expr& x) { return z3::implies(x > 0, exp2_of(x) > 1); }

// ln(a b) = ln a + ln b for a, b > 0 with a b = c; ln(2^y) = y ln 2; 2^(ln(a) log2 e) = a for a > 0.
inline z3::expr ln_mul(const z3::expr& a, const z3::expr& b, const z3::expr& c) {
  return z3::implies(a > 0 && b > 0 && a * b == c, ln_of(c) == ln_of(a) + ln_of(b));
}
inline z3::expr ln_exp2(const z3::expr& y, const z3::expr& ln2) { return ln_of(exp2_of(y)) == y * ln2; }
inline z3::expr exp2_log2(const z3::expr& a, const z3::expr& log2e) {
  return z3::implies(a > 0, exp2_of(ln_of(a) * log2e) == a);
}

}  // namespace flashproof::proofs
