// What theorem 6 (fp_proofs.cpp) assumes of exp2 and ln, and the obligations that assume it.
//
// exp2 and ln are uninterpreted (proofs/z3_domain.h). Every query gets, for each application in it,
// ground instances of these properties of the hardware approximation ex2.approx.ftz.f32 and of logf
// (the host's std::exp2 and std::log rounded to float satisfy them as well):
//   E1  exp2(-inf) = +0
//   E2  exp2(+0) = exp2(-0) = 1
//   E3  x not NaN  =>  exp2(x) is not NaN, is +0 or positive (never -0: ftz underflow gives +0),
//                      and is +inf only if x > 0
//   E4  x not NaN, x <= 0  =>  exp2(x) <= 1
//   E5  x, y not NaN, x <= y  =>  exp2(x) <= exp2(y)   (each pair of applications in the query)
//   L1  l finite, l >= 1  =>  ln(l) finite, |ln(l)| <= 128   (the true value is below 89)
// Nothing is assumed about exp2(NaN) or about ln elsewhere.
#pragma once

#include <string>
#include <vector>

#include "proofs/fp32_terms.h"
#include "proofs/obligation.h"

namespace flashproof::proofs::fp32 {

// The assumptions above in one sentence, for the end of each statement.
extern const char* const kAssumedProperties;

// "assumptions imply goal", with the exp2 and ln properties of the applications in it. Each
// application becomes a constant NAME[k].out, its argument is named NAME[k].in (Ackermann's
// reduction: with the consistency instances the query is equisatisfiable), so the query is pure QF_FP.
Obligation obligation(std::string name, const std::vector<expr>& assumptions, const expr& goal);

}  // namespace flashproof::proofs::fp32
