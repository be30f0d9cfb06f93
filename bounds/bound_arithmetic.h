// The small arithmetic the bound formulas are written in (docs/error-bounds.md Part 2): Higham's
// gamma, the log bound lambda, a product that ignores unbounded factors of zero weights, and exp
// and dot products evaluated on the safe side. Internal to the bounds library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "bounds/arithmetic_constants.h"

namespace flashproof::bounds {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.69314718055994530942, kLog2e = 1.44269504088896340736;
// A weight whose exact and computed exponents are both below -kFarLog2 (log2 units) is at most
// 2^-kFarLog2 times the row's largest weight, with its error, whatever its relative error (F4).
constexpr double kFarLog2 = 200, kFarWeight = 0x1p-180;

// Higham's gamma_n for a per-operation relative error e; +inf when it does not converge.
inline double gam(double n, double e) {
  const double x = n * e;
  return x < 0.5 ? x / (1 - x) : kInf;
}
// gamma of a sum of n products of dtype values (one more rounding per term when the products round).
inline double gam_products(double n, const ArithmeticConstants& k, double e) { return gam(n + k.product_roundings, e); }
// Bound on |log(1 + delta)| for |delta| <= x.
inline double lam(double x) { return x < 0.5 ? -std::log1p(-x) : kInf; }
// a * b with 0 * inf = 0: a zero weight times an unbounded factor contributes nothing.
inline double mul0(double a, double b) { return (a == 0 || b == 0) ? 0.0 : a * b; }
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
// exp(x) for the small arguments of the bounds (relative errors, x in [0, 2^-20]) as 1 + x + x^2,
// which is above exp(x) there (the remainder x^2/2 + x^3/6 + ... is below 0.72 x^2); rounding
// the sum costs a few ulps, like std::exp's own error, and is covered the same way by the
// margins the formulas apply. Larger arguments take std::exp.
inline double exp_small(double x) { return x >= 0 && x <= 0x1p-20 ? 1 + (x + x * x) : std::exp(x); }
// exp(-x) from below the same way: 1 - x <= exp(-x).
inline double exp_neg_small(double x) { return x >= 0 && x <= 0x1p-20 ? 1 - x : std::exp(-x); }

// sum_c a_c b_c and sum_c |a_c b_c| in double, in four interleaved lanes from 8 terms on (no
// chain waits on another). Along any path a term meets at most ceil(n/4) + 5 <= n roundings for
// n >= 8, so the gamma_n bound of a recursive dot product still holds.
using Lanes4 = double __attribute__((vector_size(32)));
inline void dot_and_abs(const double* a, const double* b, std::int64_t n, double& dot, double& abs) {
  std::int64_t c = 0;
  dot = 0, abs = 0;
  if (n >= 8) {
    Lanes4 s = {0, 0, 0, 0}, t = {0, 0, 0, 0};
    for (; c + 4 <= n; c += 4) {
      Lanes4 x, y;
      std::memcpy(&x, a + c, sizeof x);
      std::memcpy(&y, b + c, sizeof y);
      const Lanes4 pr = x * y;
      s += pr;
      t += pr < 0 ? -pr : pr;
    }
    dot = (s[0] + s[1]) + (s[2] + s[3]);
    abs = (t[0] + t[1]) + (t[2] + t[3]);
  }
  for (; c < n; ++c) dot += a[c] * b[c], abs += std::fabs(a[c] * b[c]);
}

}  // namespace flashproof::bounds
