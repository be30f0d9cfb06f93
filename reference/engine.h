// The reference computation, written once over the number type Real (double for the fast path,
// Boost.Multiprecision types for the exact paths). Every quantity carries an absolute error bound
// derived in docs/error-bounds.md; the fast path differs only where `if constexpr (kFast)` uses
// compensated (error-free transformation) sums instead of plain ones: the dot products always,
// longer sums of products (plain_sum), and the logits' exact parts through the softmax shift.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/algo/row_keys.h"
#include "reference/arith.h"
#include "reference/dense_inputs.h"
#include "reference/reference.h"

namespace flashproof::reference {

template <class Real>
struct EngineOutput {
  std::vector<Real> o, lse, dq, dk, dv;  // dense over docs/spec.md's layouts ([b,sq,hq,d], [b,hq,sq], ...)
  std::vector<double> max_abs_logit;     // per query row [b,hq,sq] (forward)
  std::vector<double> o_err, lse_err, dq_err, dk_err, dv_err;
  // Magnitude of the summands of each element (e.g. sum_j P_j |v_jc| for O): the scale against
  // which "relative accuracy" is judged where the sum cancels.
  std::vector<double> o_mass, dq_mass, dk_mass, dv_mass;
};

template <class Real>
class Engine {
  static constexpr bool kFast = std::is_same_v<Real, double>;

 public:
  Engine(const DenseInputs& in, ArithModel model, Mutation mutation = Mutation::none)
      : in_(in), p_(in.p), m_(model), mutation_(mutation),
        scale_(mutation == Mutation::scale_applied_twice
                   ? p_.softmax_scale() * p_.softmax_scale()
                   : p_.softmax_scale()),
        keys_(p_, mutation == Mutation::causal_top_left ? algo::RowKeys::Align::top_left
                                                        : algo::RowKeys::Align::bottom_right) {}

  // One query row's softmax and output, with bounds.
  struct Row {
    std::vector<std::int64_t> keys;  // visible keys
    std::vector<Real> prob;          // P^_j per visible key
    std::vector<double> prob_d;      // P^_j as double, for the bound arithmetic
    std::vector<double> prob_err;    // |P^_j - P_j|
    std::vector<Real> o;
    std::vector<double> o_err, o_mass;
    Real lse{};
    double lse_err = 0;
    double max_abs_logit = 0;  // largest |s_j| of the row (before a soft cap or a bias)
    // With a soft cap: g_j = 1 - tanh^2(s_j / c), the derivative the backward multiplies dS by,
    // and a bound on its error.
    std::vector<Real> deriv;
    std::vector<double> deriv_err;
    // Scratch reused from row to row (a row allocates nothing once these have grown).
    std::vector<Real> dlt;
    std::vector<double> delta, e_d, a, tau, comp;
    std::vector<std::array<double, 5>> parts;
  };

  // The soft cap and the ALiBi bias of head h's pair (i, j) (algo/score_mod.h) on logit s,
  // |s - s*| <= err on entry and on exit; with a cap, *deriv and *deriv_err receive g and its bound.
  void modify_logit(std::int64_t h, std::int64_t i, std::int64_t j, Real& s, double& err, Real& deriv,
                    double& deriv_err) const;

  // One query row: P with its bounds, LSE and, with_output, O. The backward recomputes P and
  // needs neither O nor its bound (D is summed from P and dP), so it skips O's n x d sums.
  void forward_row(std::int64_t b, std::int64_t h, std::int64_t i, Row& r, bool with_output = true) const;

  // Backward over the query heads of kv head hk of batch b, for the rows [row_begin, row_end) of
  // the group (row index = head_in_group * seqlen_q + i). dQ is produced for rows whose dq_mask
  // entry is set, dK/dV contributions for key columns whose col_mask entry is set (either mask
  // may be all zero). Contributions go to `acc` (one per chunk of rows, merged by the caller).
  struct ColumnAcc {
    std::vector<Real> dk, dv;          // unscaled sums, [j][c]
    std::vector<double> dk_comp, dv_comp;  // fast path: compensation terms
    std::vector<double> dk_werr, dv_werr;  // propagated error plus summation mass
    std::vector<double> dk_mass, dv_mass;
    void init(std::int64_t n, bool compensated) {
      dk_mass.assign(n, 0);
      dv_mass.assign(n, 0);
      dk.assign(n, Real(0));
      dv.assign(n, Real(0));
      dk_comp.assign(compensated ? n : 0, 0);
      dv_comp.assign(compensated ? n : 0, 0);
      dk_werr.assign(n, 0);
      dv_werr.assign(n, 0);
    }
  };
  // Whether dK and dV (sums over every row of a group) are compensated sums (plain_sum).
  bool compensated_columns() const {
    return kFast && !plain_sum(static_cast<double>(p_.seqlen_q * p_.group_size()));
  }
  void backward_rows(std::int64_t b, std::int64_t hk, std::int64_t row_begin,
                     std::int64_t row_end, const std::vector<std::uint8_t>& dq_mask,
                     const std::vector<std::uint8_t>& col_mask, ColumnAcc& acc,
                     EngineOutput<Real>& out) const;
  // Sums the chunks' partial sums (fast path: compensated) into dK, dV of the masked columns.
  void finish_columns(std::int64_t b, std::int64_t hk, std::vector<ColumnAcc>& chunks,
                      const std::vector<std::uint8_t>& col_mask, EngineOutput<Real>& out) const;

 private:
  static double to_d(const Real& x) { return static_cast<double>(x); }
  static void note_logit(Row& r, double s) {  // a NaN logit counts as infinite
    const double a = std::fabs(s);
    if (!(a <= r.max_abs_logit)) r.max_abs_logit = std::isnan(a) ? kInf : a;
  }
  // Bound of a plain or compensated sum of `terms` terms (see arith.h): coefficient of the
  // computed result's magnitude and of the sum of |terms|.
  double result_coef() const { return kFast ? m_.u / (1 - m_.u) : 0.0; }
  // Sums of products P v, dS k, dS q, P dO: the fast path sums them plainly while gamma_{N+1}
  // stays below 2^-43 of their mass (N < 1024), 8 times inside the 2^-40 requirement, and
  // compensated beyond. A plain sum's bound is gamma_{N+1} of the mass, with no final rounding.
  static constexpr double kPlainTerms = 1023;
  static bool plain_sum(double terms) { return !kFast || terms <= kPlainTerms; }
  double sum_coef(double terms) const {
    return plain_sum(terms) ? gamma_n(terms + 1, m_.u) : mass_coef(terms);
  }
  double sum_result_coef(double terms) const { return plain_sum(terms) ? 0.0 : result_coef(); }
  double mass_coef(double terms) const {
    if constexpr (kFast) {
      const double g = gamma_n(2 * terms, m_.u);
      return g * (g + 0x1p-25) / (1 - m_.u) * kSafety;
    } else {
      return gamma_n(terms + 1, m_.u);
    }
  }
  // The same for a sum of exact terms (products of two inputs: at most 24 x 24 bits), whose
  // compensated sum has no low products: the TwoSum errors' mass is at most gamma_N S and their
  // plain sum adds gamma_N of that (docs/error-bounds.md, "Dot products").
  double exact_mass_coef(double terms) const {
    if constexpr (kFast) {
      const double g = gamma_n(2 * terms, m_.u);
      return g * g / (1 - m_.u) * kSafety;
    } else {
      return gamma_n(terms + 1, m_.u);
    }
  }
  // The same for Sum3 (arith.h, dot_sum3): one more level of TwoSum, one more factor gamma.
  double exact_mass_coef3(double terms) const {
    const double g = gamma_n(2 * terms, m_.u);
    return g * g * g / (1 - m_.u) * kSafety;
  }
  // Dot product of two input rows (exact products) and its error bound.
  void input_dot(const double* a, const double* b, double norm_bound, Real& value,
                 double& err) const;

  const DenseInputs& in_;
  const Problem& p_;
  ArithModel m_;
  Mutation mutation_;
  float scale_;  // softmax scale (squared by the scale_applied_twice mutation)
  algo::RowKeys keys_;  // the keys each row sees (dense or packed)
};

template <class Real>
void Engine<Real>::input_dot(const double* a, const double* b, double norm_bound, Real& value,
                             double& err) const {
  const std::int64_t d = p_.head_dim;
  if constexpr (kFast) {
    // Products of inputs are exact in double; Sum2 keeps the unrounded pair (s1, s2).
    const DotTriple x = dot_sum2(a, b, d);
    value = x.s1 + x.s2;
    err = result_coef() * std::fabs(value) + exact_mass_coef(d) * norm_bound + d * 0x1p-1070;
  } else {
    Real acc = 0;
    for (std::int64_t c = 0; c < d; ++c) acc += Real(a[c]) * Real(b[c]);
    value = acc;
    err = mass_coef(d) * norm_bound;
  }
}

template <class Real>
void Engine<Real>::modify_logit(std::int64_t h, std::int64_t i, std::int64_t j, Real& s, double& err, Real& deriv,
                                double& deriv_err) const {
  using std::tanh;
  const double u = m_.u, t_rel = 2 * m_.uf;  // tanh within 2 uf (glibc: 2 ulps; MPFR: 1)
  const auto sech2 = [](double z) {
    const double c = std::cosh(z);
    return 1 / (c * c);
  };
  if (p_.softcap) {
    // y = c tanh(s / c): 1-Lipschitz with slope sech^2 at the interval's nearest point; the
    // division, tanh and the product by c are relative roundings of y (tanh(a (1 + t)) / tanh(a)
    // lies between 1 and 1 + t).
    const double c = static_cast<double>(*p_.softcap), sd = std::fabs(to_d(s));
    const double a_lo = std::max(0.0, sd - err) / c, da = err / c + u * sd / c;
    const Real s_raw = s;
    const Real th = tanh(s / Real(c));
    s = Real(c) * th;
    err = err * sech2(a_lo) + ((1 + u) * (1 + t_rel) * (1 + u) - 1) * std::fabs(to_d(s)) * (1 + 4 * u) + 0x1p-1060;
    // g = 1 - tanh^2 = 1 / cosh^2(s / c), formed so (1 - th^2 would cancel to nothing where the
    // logit is far past the cap, and the exact dQ, dK there are tiny, not 0): |d log g / da| =
    // 2 |tanh a| <= 2 turns the argument's error da into a relative one; cosh (2 uf), the square
    // and the division add theirs. A cosh that overflows leaves g = 0 with an exact g below
    // 4 e^-1400, under the absolute 2^-1060.
    using std::cosh;
    const Real ch = cosh(s_raw / Real(c));
    deriv = Real(1) / (ch * ch);
    deriv_err = (std::fabs(to_d(deriv)) * (std::expm1(2 * da) + 2 * t_rel + 3 * u) * (1 + 4 * u) + 0x1p-1060) * kSafety;
  }
  if (p_.alibi()) {
    const double dist = static_cast<double>(keys_.alibi_distance(i, j));
    const Real bias = -Real(static_cast<double>(p_.alibi_slopes[static_cast<std::size_t>(h)])) * Real(dist);
    s = s + bias;
    err += u * (std::fabs(to_d(bias)) + std::fabs(to_d(s))) * (1 + 4 * u);
  }
  err *= kSafety;
}

template <class Real>
void Engine<Real>::forward_row(std::int64_t b, std::int64_t h, std::int64_t i, Row& r, bool with_output) const {
  using std::exp;
  using std::log;
  const std::int64_t d = p_.head_dim, hk = p_.kv_head(h);
  const double u = m_.u, uf1 = m_.uf / (1 - m_.uf);
  const double* q = in_.q.row(b, h, i);
  const double qn = in_.q.row_norm(b, h, i);
  const double abs_scale = std::fabs(static_cast<double>(scale_));

  r.keys.clear();
  const algo::KeyRange<std::int64_t> seen = keys_.of_row(i);
  for (std::int64_t j = seen.begin; j < seen.end; ++j) r.keys.push_back(j);
  const std::int64_t n = static_cast<std::int64_t>(r.keys.size());
  r.o.assign(d, Real(0));
  r.o_err.assign(d, 0.0);
  r.o_mass.assign(d, 0.0);
  r.prob.assign(n, Real(0));
  r.prob_d.assign(n, 0.0);
  r.prob_err.assign(n, 0.0);
  r.max_abs_logit = 0;
  if (n == 0) {  // no visible key: O = 0 and LSE = +inf exactly
    r.lse = Real(kInf);
    r.lse_err = 0;
    return;
  }

  // Logits s_j = scale * q.k_j, reduced by the shift m: d_j ~ s_j - m with |d^_j - (s_j - m)|
  // <= delta_j. The fast path keeps s_j as five parts whose sum is within the dot's bound of s_j,
  // four of them exact, so that the rounding error of d_j scales with |d_j|, not with |s_j|
  // (large logits stay certified; docs/error-bounds.md, "Logits and shift").
  std::vector<Real>& dlt = r.dlt;
  std::vector<double>& delta = r.delta;
  std::vector<std::array<double, 5>>& parts = r.parts;
  dlt.assign(n, Real(0));
  delta.assign(n, 0.0);
  parts.resize(kFast ? n : 0);
  Real shift;
  double shift2 = 0;  // fast path: second part of the shift, m = shift + shift2 exactly
  if constexpr (kFast) {
    // Sum2 leaves gamma_2d^2 |scale| |q| |k| in the logit: up to 2^-52 (logits to about 2^36),
    // far under the 2^-40 requirement; beyond (decided per row, by its largest key norm), Sum3's
    // gamma_2d^3 keeps logits up to 2^80 certified.
    double k_max = 0;
    for (std::int64_t t = 0; t < n; ++t) k_max = std::max(k_max, in_.k.row_norm(b, hk, r.keys[t]));
    const bool third = abs_scale * exact_mass_coef(d) * qn * k_max > 0x1p-52;
    const double coef = abs_scale * (third ? exact_mass_coef3(d) : exact_mass_coef(d)) * qn;
    const double sc = scale_;
    for (std::int64_t t = 0; t < n; ++t) {
      const double* k = in_.k.row(b, hk, r.keys[t]);
      const DotTriple x = third ? dot_sum3(q, k, d) : dot_sum2(q, k, d);
      const TwoDouble x1 = split(x.s1), x2 = split(x.s2);  // scale has 24 bits: exact products
      const double tail = sc * x.s3;                        // the only rounded part
      parts[t] = {x1.hi * sc, x1.lo * sc, x2.hi * sc, x2.lo * sc, tail};
      delta[t] = coef * in_.k.row_norm(b, hk, r.keys[t]) + u * std::fabs(tail) * (1 + 4 * u) +
                 0x1p-1060;  // + underflowed products
    }
  } else {
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t j = r.keys[t];
      Real dot;
      double err;
      input_dot(q, in_.k.row(b, hk, j), qn * in_.k.row_norm(b, hk, j), dot, err);
      dlt[t] = Real(static_cast<double>(scale_)) * dot;
      delta[t] = abs_scale * err + u * std::fabs(to_d(dlt[t])) * (1 + 4 * u);
    }
  }
  // The soft cap and ALiBi (docs/error-bounds.md "Score modification"): each logit as one value,
  // modified, then shifted as the multiple-precision path does (no exact parts survive tanh).
  const bool mod = p_.score_mod();
  r.deriv.assign(p_.softcap ? n : 0, Real(0));
  r.deriv_err.assign(p_.softcap ? n : 0, 0.0);
  if (mod) {
    for (std::int64_t t = 0; t < n; ++t) {
      Real sv;
      double err = delta[t];
      if constexpr (kFast) {  // the five parts summed: four roundings of at most u their mass
        const std::array<double, 5>& x = parts[t];
        sv = ((x[0] + x[1]) + (x[2] + x[3])) + x[4];
        err += 5 * u * (std::fabs(x[0]) + std::fabs(x[1]) + std::fabs(x[2]) + std::fabs(x[3]) + std::fabs(x[4]));
      } else {
        sv = dlt[t];
      }
      note_logit(r, to_d(sv));
      Real g = 0;
      double g_err = 0;
      modify_logit(h, i, r.keys[t], sv, err, g, g_err);
      if (p_.softcap) r.deriv[t] = g, r.deriv_err[t] = g_err;
      dlt[t] = sv;
      delta[t] = err;
    }
  }
  const auto plain_shift = [&] {
    shift = *std::max_element(dlt.begin(), dlt.end());
    for (std::int64_t t = 0; t < n; ++t) {
      if (!mod) note_logit(r, to_d(dlt[t]));
      dlt[t] = dlt[t] - shift;
      delta[t] += u * std::fabs(to_d(dlt[t])) * (1 + 4 * u);
    }
  };
  if (mod) {
    plain_shift();
  } else if constexpr (kFast) {
    // The shift must be (close to) the largest logit, not the largest high part: the second part
    // reaches 2^-26 |s|, so with logits near 2^64 a larger high part can belong to a smaller logit
    // by 2^38 and exp(d_j) would overflow. First: m1 = max fl(part0 + part1), within 2u |s|
    // (<= 2^12) of the largest logit. Second: s_j - m1 from the exact parts by Sum2 (part0 - m1
    // by TwoSum), kept as the unevaluated pair (hi_j, lo_j), within gamma_12^2 of the parts' mass.
    // Third: m2 = max fl(hi_j + lo_j) and d^_j = fl(fl(hi_j - m2) + lo_j) through TwoSum, so the
    // rounding is u |d_j| (a u |s_j - m1| term here would reach 2^-40 near 2^64), every d^_j is
    // at most u |m2| (l^ >= 1/2, exp cannot overflow) and m = m1 + m2 exactly.
    shift = -kInf;
    for (std::int64_t t = 0; t < n; ++t) {
      const double s01 = parts[t][0] + parts[t][1];
      shift = std::max(shift, s01);
      note_logit(r, s01);
    }
    const double combine = exact_mass_coef(6);
    double top = -kInf;
    for (std::int64_t t = 0; t < n; ++t) {
      std::array<double, 5>& x = parts[t];
      const TwoDouble e = two_sum(x[0], -shift);
      const double terms[6] = {e.hi, x[1], x[2], x[3], x[4], e.lo};
      double sum = 0, comp = 0, mass = 0;
      for (double term : terms) {
        const TwoDouble f = two_sum(sum, term);
        sum = f.hi;
        comp += f.lo;
        mass += std::fabs(term);
      }
      x[0] = sum;
      x[1] = comp;
      delta[t] += combine * mass;
      top = std::max(top, sum + comp);
    }
    if (std::isfinite(top)) shift2 = top;
    for (std::int64_t t = 0; t < n; ++t) {
      const TwoDouble e = two_sum(parts[t][0], -shift2);
      const double w = e.lo + parts[t][1];
      dlt[t] = e.hi + w;
      delta[t] += u * (std::fabs(w) + std::fabs(dlt[t])) * (1 + 4 * u);
    }
  } else {
    plain_shift();
  }

  // e^_j = exp(d^_j); terms below exp(-cutoff) are dropped, their exact mass bounded by tau_j.
  std::vector<Real>& e = r.prob;
  std::vector<double>&e_d = r.e_d, &a = r.a, &tau = r.tau;
  e_d.assign(n, 0.0);
  a.assign(n, 0.0);
  tau.assign(n, 0.0);
  Real l = 0;
  double l_comp = 0, l_mass = 0, l_dropped = 0, l_perturb = 0;
  for (std::int64_t t = 0; t < n; ++t) {
    const double dd = to_d(dlt[t]);
    if (!(dd >= -m_.cutoff)) {
      e[t] = 0;
      tau[t] = std::exp(std::min(dd + delta[t], 0.0)) * (1 + 16 * 0x1p-53);
      if (std::isnan(dd)) tau[t] = kInf;
      l_dropped += tau[t];
      continue;
    }
    e[t] = exp(dlt[t]);
    e_d[t] = to_d(e[t]);
    a[t] = delta[t] + uf1;  // |log e^_j - (s_j - m)| <= a_j
    l_perturb += e_d[t] * std::expm1(a[t]);
    if constexpr (kFast) {
      const TwoDouble s = two_sum(l, e[t]);
      l = s.hi;
      l_comp += s.lo;
    } else {
      l += e[t];
    }
    l_mass += e_d[t];
  }
  if constexpr (kFast) l += l_comp;
  const double l_d = to_d(l);
  // |l - l^| <= summation error + perturbation of the kept terms + dropped mass.
  const double eps_l = (result_coef() * l_d + mass_coef(n) * l_mass + l_perturb * kSafety +
                        l_dropped) * kSafety;
  const double rr = eps_l / l_d;
  const double rho = rr < 0.5 ? rr / (1 - rr) * kSafety : kInf;  // |log(l / l^)| <= rho

  // P^_j = e^_j / l^, |log(P^_j / P_j)| <= a_j + rho + u.
  const double l_lower = rr < 0.5 ? l_d * (1 - rr) : 0.0;  // l >= l_lower
  for (std::int64_t t = 0; t < n; ++t) {
    if (e[t] == 0) {
      r.prob_err[t] = tau[t] / l_lower * kSafety;  // 0 / 0 (NaN) is read as "no bound" later
      continue;
    }
    e[t] = e[t] / l;
    r.prob_d[t] = to_d(e[t]);
    r.prob_err[t] = r.prob_d[t] * std::expm1(a[t] + rho + u / (1 - u)) * kSafety;
  }
  const Real log_l = log(l);
  // LSE = m + log l with m = shift (+ shift2 on the fast path; adding it rounds once more).
  Real tail = log_l;
  double tail_err = 0;
  if constexpr (kFast) {
    if (shift2 != 0) {
      tail = shift2 + log_l;
      tail_err = u * std::fabs(tail) * (1 + 4 * u);
    }
  }
  r.lse = shift + tail;
  r.lse_err = (rho + m_.uf * std::fabs(to_d(log_l)) + tail_err +
               u * std::fabs(to_d(r.lse)) * (1 + 4 * u)) *
              kSafety;

  if (!with_output) return;
  // O_c = sum_j P^_j v_jc. Error: summation bound plus sum_j |P^_j - P_j| |v_jc|.
  const double g = sum_coef(n);
  const bool plain = plain_sum(n);
  std::vector<double>& comp = r.comp;
  comp.assign(kFast ? d : 0, 0.0);
  for (std::int64_t t = 0; t < n; ++t) {
    const double* v = in_.v.row(b, hk, r.keys[t]);
    const double w = g * r.prob_d[t] + r.prob_err[t];
    if constexpr (kFast) {
      if (plain)
        plain_axpy(r.prob_d[t], w, r.prob_d[t], v, r.o.data(), r.o_err.data(), r.o_mass.data(), d);
      else
        compensated_axpy(split(r.prob_d[t]), w, r.prob_d[t], v, r.o.data(), comp.data(),
                         r.o_err.data(), r.o_mass.data(), d);
    } else {
      for (std::int64_t c = 0; c < d; ++c) {
        r.o[c] += r.prob[t] * Real(v[c]);
        r.o_err[c] += w * std::fabs(v[c]);
        r.o_mass[c] += r.prob_d[t] * std::fabs(v[c]);
      }
    }
  }
  for (std::int64_t c = 0; c < d; ++c) {
    if constexpr (kFast) r.o[c] += comp[c];
    r.o_err[c] = (r.o_err[c] + sum_result_coef(n) * std::fabs(to_d(r.o[c])) + n * 0x1p-1060) *
                 kSafety;
  }
}

template <class Real>
void Engine<Real>::backward_rows(std::int64_t b, std::int64_t hk, std::int64_t row_begin,
                                 std::int64_t row_end, const std::vector<std::uint8_t>& dq_mask,
                                 const std::vector<std::uint8_t>& col_mask, ColumnAcc& acc,
                                 EngineOutput<Real>& out) const {
  const std::int64_t d = p_.head_dim, sq = p_.seqlen_q, g = p_.group_size();
  const double u = m_.u, abs_scale = std::fabs(static_cast<double>(scale_));
  const double column_terms = static_cast<double>(sq * g);  // dK/dV sum over all group rows
  const double gk = sum_coef(column_terms);
  const bool plain_columns = plain_sum(column_terms);
  const auto head_cols = col_mask.begin() + (b * p_.heads_kv + hk) * p_.seqlen_k;
  const bool any_col = std::any_of(head_cols, head_cols + p_.seqlen_k, [](auto x) { return x; });
  Row r;
  std::vector<Real> ds, dp;
  std::vector<double> ds_d, sigma, mass, dp_err;  // mass_j = P^_j (|dP_j| + |D|): dS_j's summands
  for (std::int64_t row = row_begin; row < row_end; ++row) {
    const std::int64_t h = hk * g + row / sq, i = row % sq;
    const std::int64_t qrow = (b * p_.heads_q + h) * sq + i;  // index of (b, h, i)
    const bool want_dq = dq_mask[qrow];
    if (!want_dq && !any_col) continue;
    forward_row(b, h, i, r, /*with_output=*/false);
    const std::int64_t n = static_cast<std::int64_t>(r.keys.size());
    const double* dout = in_.dout.row(b, h, i);
    const double* q = in_.q.row(b, h, i);
    const double don = in_.dout.row_norm(b, h, i);

    // dP_j = dO . v_j (exact products).
    dp.resize(n);
    dp_err.resize(n);
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t j = r.keys[t];
      input_dot(dout, in_.v.row(b, hk, j), don * in_.v.row_norm(b, hk, j), dp[t], dp_err[t]);
    }
    // D = sum_j P_j dP_j, which is dO . O. Summed this way its error is relative to
    // sum_j P_j |dP_j| rather than to sum_c |dO_c| |O_c|: where dO . v_j cancels (|dP_j| far below
    // |dO| |v_j|) and one key takes all the mass, dP_j - D is then still certified to 2^-40 of
    // dS's magnitude P_j (|dP_j| + |D|) (docs/error-bounds.md, "O, D, dS").
    Real dsum = 0;
    double dsum_err = 0, dsum_mass = 0, dsum_comp = 0;
    for (std::int64_t t = 0; t < n; ++t) {
      const Real prod = r.prob[t] * dp[t];
      if constexpr (kFast) {
        const TwoDouble s = two_sum(dsum, prod);
        dsum = s.hi;
        dsum_comp += s.lo;
      } else {
        dsum += prod;
      }
      dsum_mass += std::fabs(to_d(prod));
      dsum_err += r.prob_err[t] * std::fabs(to_d(dp[t])) + (r.prob_d[t] + r.prob_err[t]) * dp_err[t];
    }
    if constexpr (kFast) dsum += dsum_comp;
    // + the products' roundings (u each) and the sum's; products below the normal range add 2^-1074.
    dsum_err = (dsum_err + result_coef() * std::fabs(to_d(dsum)) +
                (u * (1 + 4 * u) + exact_mass_coef(n)) * dsum_mass + n * 0x1p-1060) * kSafety;

    // dS_j = P^_j (dP_j - D); sigma_j bounds |dS^_j - dS_j|.
    ds.assign(n, Real(0));
    ds_d.assign(n, 0.0);
    sigma.assign(n, 0.0);
    mass.assign(n, 0.0);
    const double dsum_abs = std::fabs(to_d(dsum));
    for (std::int64_t t = 0; t < n; ++t) {
      const Real x = mutation_ == Mutation::gradient_sign_flipped ? dsum - dp[t] : dp[t] - dsum;
      const double xd = std::fabs(to_d(x));
      const double x_err = dp_err[t] + dsum_err + u * xd * (1 + 4 * u);
      ds[t] = r.prob[t] * x;
      ds_d[t] = to_d(ds[t]);
      mass[t] = r.prob_d[t] * (std::fabs(to_d(dp[t])) + dsum_abs);
      sigma[t] = (r.prob_err[t] * xd + (r.prob_d[t] + r.prob_err[t]) * x_err +
                  u * std::fabs(ds_d[t]) * (1 + 4 * u)) * kSafety;
      if (p_.softcap && mutation_ != Mutation::softcap_derivative_dropped) {
        // Through the cap: dS_j g_j, g_j = 1 - tanh^2(s_j / c) within deriv_err of the exact one.
        const double gd = std::fabs(to_d(r.deriv[t])), ge = r.deriv_err[t], before = std::fabs(ds_d[t]);
        ds[t] = ds[t] * r.deriv[t];
        ds_d[t] = to_d(ds[t]);
        mass[t] *= gd + ge;
        sigma[t] = (sigma[t] * (gd + ge) + before * ge + u * std::fabs(ds_d[t]) * (1 + 4 * u)) * kSafety;
      }
    }

    if (want_dq) {  // dQ_c = scale * sum_j dS_j k_jc
      std::vector<Real> acc_q(d, Real(0));
      std::vector<double> comp(d, 0.0), werr(d, 0.0), qmass(d, 0.0);
      const double gq = sum_coef(n);
      const bool plain = plain_sum(n);
      for (std::int64_t t = 0; t < n; ++t) {
        const double* k = in_.k.row(b, hk, r.keys[t]);
        const double w = gq * std::fabs(ds_d[t]) + sigma[t];
        if constexpr (kFast) {
          if (plain)
            plain_axpy(ds_d[t], w, mass[t], k, acc_q.data(), werr.data(), qmass.data(), d);
          else
            compensated_axpy(split(ds_d[t]), w, mass[t], k, acc_q.data(), comp.data(),
                             werr.data(), qmass.data(), d);
        } else {
          for (std::int64_t c = 0; c < d; ++c) {
            acc_q[c] += ds[t] * Real(k[c]);
            werr[c] += w * std::fabs(k[c]);
            qmass[c] += mass[t] * std::fabs(k[c]);
          }
        }
      }
      for (std::int64_t c = 0; c < d; ++c) {
        if constexpr (kFast) acc_q[c] += comp[c];
        const Real val = Real(static_cast<double>(scale_)) * acc_q[c];
        const double err = werr[c] + sum_result_coef(n) * std::fabs(to_d(acc_q[c])) + n * 0x1p-1060;
        const std::int64_t idx = ((b * sq + i) * p_.heads_q + h) * d + c;
        out.dq[idx] = val;
        out.dq_err[idx] = (abs_scale * err + u * std::fabs(to_d(val)) * (1 + 4 * u)) * kSafety;
        out.dq_mass[idx] = abs_scale * qmass[c];
      }
    }

    // dK_j += dS_j q (scaled at the end), dV_j += P^_j dO.
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t j = r.keys[t];
      if (!col_mask[(b * p_.heads_kv + hk) * p_.seqlen_k + j]) continue;
      const double wk = gk * std::fabs(ds_d[t]) + sigma[t];
      const double wv = gk * r.prob_d[t] + r.prob_err[t];
      const std::int64_t base = j * d;
      if constexpr (kFast) {
        if (plain_columns) {
          plain_axpy(ds_d[t], wk, mass[t], q, acc.dk.data() + base, acc.dk_werr.data() + base,
                     acc.dk_mass.data() + base, d);
          plain_axpy(r.prob_d[t], wv, r.prob_d[t], dout, acc.dv.data() + base,
                     acc.dv_werr.data() + base, acc.dv_mass.data() + base, d);
          continue;
        }
        compensated_axpy(split(ds_d[t]), wk, mass[t], q, acc.dk.data() + base,
                         acc.dk_comp.data() + base, acc.dk_werr.data() + base,
                         acc.dk_mass.data() + base, d);
        compensated_axpy(split(r.prob_d[t]), wv, r.prob_d[t], dout, acc.dv.data() + base,
                         acc.dv_comp.data() + base, acc.dv_werr.data() + base,
                         acc.dv_mass.data() + base, d);
      } else {
        for (std::int64_t c = 0; c < d; ++c) {
          acc.dk[base + c] += ds[t] * Real(q[c]);
          acc.dk_werr[base + c] += wk * std::fabs(q[c]);
          acc.dk_mass[base + c] += mass[t] * std::fabs(q[c]);
          acc.dv[base + c] += r.prob[t] * Real(dout[c]);
          acc.dv_werr[base + c] += wv * std::fabs(dout[c]);
          acc.dv_mass[base + c] += r.prob_d[t] * std::fabs(dout[c]);
        }
      }
    }
  }
}

template <class Real>
void Engine<Real>::finish_columns(std::int64_t b, std::int64_t hk, std::vector<ColumnAcc>& chunks,
                                  const std::vector<std::uint8_t>& col_mask,
                                  EngineOutput<Real>& out) const {
  const std::int64_t d = p_.head_dim, sk = p_.seqlen_k;
  const double u = m_.u, abs_scale = std::fabs(static_cast<double>(scale_));
  // Merging C chunk sums adds C terms to each sum: the bound counts them as extra terms.
  const double merge = mass_coef(static_cast<double>(chunks.size()));
  for (std::int64_t j = 0; j < sk; ++j) {
    if (!col_mask[(b * p_.heads_kv + hk) * sk + j]) continue;
    for (std::int64_t c = 0; c < d; ++c) {
      const std::int64_t x = j * d + c;
      auto finish = [&](auto member, auto comp_member, auto werr_member, auto mass_member,
                        bool scaled, std::vector<Real>& dst, std::vector<double>& dst_err,
                        std::vector<double>& dst_mass) {
        Real sum = 0;
        double comp = 0, werr = 0, parts = 0, mass = 0;
        for (ColumnAcc& a : chunks) {
          mass += (a.*mass_member)[x];
          Real part = (a.*member)[x];
          if constexpr (kFast)
            if (!(a.*comp_member).empty()) part += (a.*comp_member)[x];  // compensated sums
          parts += std::fabs(to_d(part));
          if constexpr (kFast) {
            const TwoDouble s = two_sum(sum, part);
            sum = s.hi;
            comp += s.lo;
          } else {
            sum += part;
          }
          werr += (a.*werr_member)[x] + u * std::fabs(to_d(part));  // rounding of the part
        }
        if constexpr (kFast) sum += comp;
        double err = werr + merge * parts + result_coef() * std::fabs(to_d(sum));
        Real val = sum;
        if (scaled) {
          val = Real(static_cast<double>(scale_)) * sum;
          err = abs_scale * err + u * std::fabs(to_d(val)) * (1 + 4 * u);
        }
        const std::int64_t idx = ((b * sk + j) * p_.heads_kv + hk) * d + c;
        dst[idx] = val;
        dst_err[idx] = err * kSafety + kFloor;
        dst_mass[idx] = scaled ? abs_scale * mass : mass;
      };
      finish(&ColumnAcc::dk, &ColumnAcc::dk_comp, &ColumnAcc::dk_werr, &ColumnAcc::dk_mass, true,
             out.dk, out.dk_err, out.dk_mass);
      finish(&ColumnAcc::dv, &ColumnAcc::dv_comp, &ColumnAcc::dv_werr, &ColumnAcc::dv_mass, false,
             out.dv, out.dv_err, out.dv_mass);
    }
  }
}

}  // namespace flashproof::reference
