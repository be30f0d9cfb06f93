// The arithmetic model of the reference (docs/error-bounds.md): unit roundoff, the relative error
// of exp and log, and the summation primitives with their a-priori error bounds. Bounds are
// evaluated in double; every bound is finally multiplied by kSafety and raised by kFloor, which
// covers the rounding of the bound arithmetic itself and any underflow of tiny terms.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace flashproof::reference {

inline constexpr double kSafety = 1 + 0x1p-20;
inline constexpr double kFloor = 0x1p-700;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Higham's gamma_n = n u / (1 - n u), +inf once n u >= 1/2.
inline double gamma_n(double n, double u) {
  const double nu = n * u;
  return nu < 0.5 ? nu / (1 - nu) * kSafety : kInf;
}

// What the engine needs to know of a number type. `u`: unit roundoff of + - * / and of
// conversion; `uf`: relative error of exp and log; `cutoff`: exp(x) for x < -cutoff is taken as 0
// (the dropped mass is bounded separately) so that no result underflows.
struct ArithModel {
  double u;
  double uf;
  double cutoff;
};

// ---- Error-free transformations in double (binary64, round to nearest, no fma needed) ----

struct TwoDouble {
  double hi, lo;
};

// Knuth's TwoSum: a + b == s + e exactly.
inline TwoDouble two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

// Veltkamp's split: x == hi + lo exactly with hi on 26 and lo on 27 significant bits, so that the
// product of either part with a value of at most 26 significant bits (any fp16, bf16 or fp32
// input) is exact in double.
inline TwoDouble split(double x) {
  constexpr double factor = 0x1p27 + 1;
  const double c = factor * x;
  const double hi = c - (c - x);
  return {hi, x - hi};
}

// Dot products of exact terms x_c = a_c b_c (products of two inputs) as an unevaluated triple
// s1 + s2 + s3. Sum2: one TwoSum chain, its errors summed plainly into s2 (s3 = 0); the triple is
// within gamma_2n^2 S of the exact sum, S = sum |x_c|. Sum3: the chain's errors go through a
// second TwoSum chain and only that chain's errors are summed plainly: each level multiplies the
// mass by gamma_n (the TwoSum errors of a chain over mass M have mass <= gamma_n M), so the
// triple is within gamma_2n^3 S
// (docs/error-bounds.md, "Dot products").
struct DotTriple {
  double s1, s2, s3;
};
// Four lanes of doubles (GCC/Clang vector extension: two SSE2 registers, or one AVX register).
using Lanes4 = double __attribute__((vector_size(32)));

// Sum2 in four interleaved lanes (element c goes to lane c mod 4), so the TwoSum chains do not
// wait on one another and the loop runs on vector registers; the lane sums and the n mod 4 last
// terms then go through one more TwoSum chain. Every term still passes through at most n TwoSums
// whose errors are summed plainly, so the gamma_2n^2 S bound above holds unchanged.
inline DotTriple dot_sum2(const double* a, const double* b, std::int64_t n) {
  Lanes4 s1 = {0, 0, 0, 0}, s2 = {0, 0, 0, 0};
  std::int64_t c = 0;
  for (; c + 4 <= n; c += 4) {
    Lanes4 x, y;
    std::memcpy(&x, a + c, sizeof x);
    std::memcpy(&y, b + c, sizeof y);
    const Lanes4 p = x * y;
    const Lanes4 s = s1 + p;
    const Lanes4 bb = s - s1;
    s2 += (s1 - (s - bb)) + (p - bb);
    s1 = s;
  }
  double sum = 0, comp = (s2[0] + s2[1]) + (s2[2] + s2[3]);
  for (int lane = 0; lane < 4; ++lane) {
    const TwoDouble t = two_sum(sum, s1[lane]);
    sum = t.hi;
    comp += t.lo;
  }
  for (; c < n; ++c) {
    const TwoDouble t = two_sum(sum, a[c] * b[c]);
    sum = t.hi;
    comp += t.lo;
  }
  return {sum, comp, 0.0};
}
// Sum3 in four interleaved lanes from 32 terms on: each lane runs both TwoSum levels and its own
// plain sum, then the lanes' first-level sums (and the n mod 4 last terms) go through a first-level
// chain, the lanes' second-level sums and that chain's errors through a second-level chain, and
// everything left into the plain sum. Each first- or second-level term passes through at most
// n/4 + 11 TwoSums and each plain term through at most n/4 + 16 additions, both at most n from
// 32 terms on, so the chains' errors keep their gamma_n mass bounds and the triple its
// gamma_n^3 S (docs/error-bounds.md, "Dot products"). Shorter rows take the scalar chains.
inline DotTriple dot_sum3(const double* a, const double* b, std::int64_t n) {
  double s1 = 0, s2 = 0, s3 = 0;
  auto push2 = [&](double x) {  // into the second level
    const TwoDouble e = two_sum(s2, x);
    s2 = e.hi;
    s3 += e.lo;
  };
  auto push1 = [&](double x) {  // into the first level, its error into the second
    const TwoDouble t = two_sum(s1, x);
    s1 = t.hi;
    push2(t.lo);
  };
  std::int64_t c = 0;
  if (n >= 32) {
    Lanes4 l1 = {0, 0, 0, 0}, l2 = {0, 0, 0, 0}, l3 = {0, 0, 0, 0};
    for (; c + 4 <= n; c += 4) {
      Lanes4 x, y;
      std::memcpy(&x, a + c, sizeof x);
      std::memcpy(&y, b + c, sizeof y);
      const Lanes4 p = x * y;
      const Lanes4 t = l1 + p, tb = t - l1, e1 = (l1 - (t - tb)) + (p - tb);
      l1 = t;
      const Lanes4 u = l2 + e1, ub = u - l2, e2 = (l2 - (u - ub)) + (e1 - ub);
      l2 = u;
      l3 += e2;
    }
    s3 = (l3[0] + l3[1]) + (l3[2] + l3[3]);
    for (int lane = 0; lane < 4; ++lane) push1(l1[lane]);
    for (int lane = 0; lane < 4; ++lane) push2(l2[lane]);
  }
  for (; c < n; ++c) push1(a[c] * b[c]);
  return {s1, s2, s3};
}

// One term of Dot2 over whole rows: acc[c] + comp[c] gains x * y[c] (x split once, so both
// partial products are exact for y of at most 26 bits), and the bound's running sums gain
// err[c] += w |y[c]| and mass[c] += m |y[c]|. The rows do not overlap (restrict), so the loop
// vectorises.
inline void compensated_axpy(const TwoDouble& x, double w, double m, const double* __restrict y,
                             double* __restrict acc, double* __restrict comp,
                             double* __restrict err, double* __restrict mass, std::int64_t n) {
  for (std::int64_t c = 0; c < n; ++c) {
    const TwoDouble s = two_sum(acc[c], x.hi * y[c]);
    acc[c] = s.hi;
    comp[c] += s.lo + x.lo * y[c];
    const double a = std::fabs(y[c]);
    err[c] += w * a;
    mass[c] += m * a;
  }
}

// The same term summed plainly (acc[c] += fl(x y[c]), rounded twice), for sums short enough
// that gamma_{N+1} of their mass already meets the requirement (engine.h, plain_sum).
inline void plain_axpy(double x, double w, double m, const double* __restrict y,
                       double* __restrict acc, double* __restrict err, double* __restrict mass,
                       std::int64_t n) {
  for (std::int64_t c = 0; c < n; ++c) {
    acc[c] += x * y[c];
    const double a = std::fabs(y[c]);
    err[c] += w * a;
    mass[c] += m * a;
  }
}

// Ogita-Rump-Oishi Dot2 over products a_i * b_i where each b_i has at most 26 significant bits:
// a_i is split once, both partial products are exact, the high one enters a TwoSum chain and the
// low one joins the compensation. `abs_sum` accumulates sum |a_i b_i| for the bound.
struct CompensatedSum {
  double sum = 0, comp = 0, abs_sum = 0;
  std::int64_t terms = 0;

  void add_exact(double x) {  // x exact (e.g. a product of two inputs)
    const TwoDouble t = two_sum(sum, x);
    sum = t.hi;
    comp += t.lo;
    abs_sum += std::fabs(x);
    ++terms;
  }
  void add_product(const TwoDouble& a_split, double a, double b) {
    const TwoDouble t = two_sum(sum, a_split.hi * b);
    sum = t.hi;
    comp += t.lo + a_split.lo * b;
    abs_sum += std::fabs(a * b);
    ++terms;
  }
  double value() const { return sum + comp; }
  // |value() - exact| <= (u |value| + gamma_2N (gamma_2N + 2^-25) S) / (1 - u): the unrounded
  // pair sum + comp is off by gamma_2N times the mass of the TwoSum errors and low products
  // (<= (gamma_N + 2^-26) S), and the final addition rounds once.
  double error_bound() const {
    constexpr double u = 0x1p-53;
    const double g = gamma_n(2.0 * terms, u);
    return (u * std::fabs(value()) + g * (g + 0x1p-25) * abs_sum * (1 + 0x1p-20)) /
               (1 - u) * kSafety +
           terms * 0x1p-1020;  // products below the normal range are not exact
  }
};

}  // namespace flashproof::reference
