// The soft cap's and ALiBi's terms of the bounds (docs/error-bounds.md "Score modification",
// (M1)-(M3)): the exact modified logit with its margin, the error of the computed one, and the
// error of the backward's 1 - t^2. Units: the exact logits are natural; the computed ones are in
// the model's softmax units, L = log2 e (flash) or 1 (naive).
#pragma once

#include <cstdint>

#include "bounds/case_constants.h"

namespace flashproof::bounds {

// The modification of one (row, key) pair: its ALiBi bias b = -slope |distance| (0 without ALiBi).
double alibi_bias(const CaseConstants& cs, std::int64_t h, std::int64_t i, std::int64_t j);

// (M1) y = c tanh(s / c) + b (each part only where set) from the double logit s, |s - s*| <= e_s:
// y and a bound on |y - y*|.
void exact_modified_logit(const CaseConstants& cs, double s, double e_s, double bias, double& y, double& e_y);

// (M2) A bound on |y^ - L y*| for the computed logit y^, from e_x >= |x^ - L s*| (x^ the computed
// scaled product), the exact raw logit's bounds s_lo <= |s*| <= s_up, |b| and |y*| <= y_up.
double computed_modified_error(const CaseConstants& cs, double e_x, double s_lo, double s_up, double bias,
                               double y_up);

// (M3) The cap's derivative g = 1 - tanh^2(s* / c): an upper bound on g and on |g^ - g| for the
// backward's g^ = fl(1 - fl(t^ t^)), t^ the tanh the recomputed logit used.
struct CapDerivative {
  double g_up, g_err;
};
CapDerivative cap_derivative(const CaseConstants& cs, double e_x, double s_lo, double s_up);

}  // namespace flashproof::bounds
