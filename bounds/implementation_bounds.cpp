// The bound formulas of docs/error-bounds.md Part 2, one query row at a time. Section numbers in
// the comments ("(F3)") refer to the derivation there; every quantity is an upper bound.
#include "bounds/implementation_bounds.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "bounds/arithmetic_constants.h"
#include "core/parallel.h"
#include "kernels/algo/mask.h"

namespace flashproof::bounds {

ArithmeticConstants constants_for(ArithmeticModel m, DType t) {
  ArithmeticConstants k;
  k.dtype_u = unit_roundoff(t);
  switch (t) {
    case DType::fp16: k.dtype_abs = 0x1p-25, k.dtype_max = 65504; break;
    case DType::bf16: k.dtype_abs = 0x1p-134, k.dtype_max = 0x1.fcp127; break;
    case DType::fp32: k.dtype_abs = 0x1p-150, k.dtype_max = FLT_MAX, k.product_roundings = 1; break;
  }
  if (m == ArithmeticModel::naive) {
    k.flash = false;
    k.sum_eta = k.u;  // scalar fp32 sums, round to nearest
    k.dot_block = 1;
    k.exp_rel = 0x1p-22;  // expf: within 1 ulp (glibc), taken as 2
    k.scale_rel = 0;      // natural exp: no log2(e) folded into the scale
    k.flush = 0x1p-149;   // the host keeps subnormals: half a subnormal step per operation, doubled
  }
  return k;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.69314718055994530942, kLog2e = 1.44269504088896340736;
// A weight whose exact and computed exponents are both below -kFarLog2 (log2 units) is at most
// 2^-kFarLog2 times the row's largest weight, with its error, whatever its relative error (F4).
constexpr double kFarLog2 = 200, kFarWeight = 0x1p-180;

// Higham's gamma_n for a per-operation relative error e; +inf when it does not converge.
double gam(double n, double e) {
  const double x = n * e;
  return x < 0.5 ? x / (1 - x) : kInf;
}
// gamma of a sum of n products of dtype values (one more rounding per term when the products round).
double gam_products(double n, const ArithmeticConstants& k, double e) { return gam(n + k.product_roundings, e); }
// Bound on |log(1 + delta)| for |delta| <= x.
double lam(double x) { return x < 0.5 ? -std::log1p(-x) : kInf; }
// a * b with 0 * inf = 0: a zero weight times an unbounded factor contributes nothing.
double mul0(double a, double b) { return (a == 0 || b == 0) ? 0.0 : a * b; }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
// exp(x) for the small arguments of the bounds (relative errors, x in [0, 2^-20]) as 1 + x + x^2,
// which is above exp(x) there (the remainder x^2/2 + x^3/6 + ... is below 0.72 x^2); rounding
// the sum costs a few ulps, like std::exp's own error, and is covered the same way by the
// margins the formulas apply. Larger arguments take std::exp.
double exp_small(double x) { return x >= 0 && x <= 0x1p-20 ? 1 + (x + x * x) : std::exp(x); }
// exp(-x) from below the same way: 1 - x <= exp(-x).
double exp_neg_small(double x) { return x >= 0 && x <= 0x1p-20 ? 1 - x : std::exp(-x); }

// sum_c a_c b_c and sum_c |a_c b_c| in double, in four interleaved lanes from 8 terms on (no
// chain waits on another). Along any path a term meets at most ceil(n/4) + 5 <= n roundings for
// n >= 8, so the gamma_n bound of a recursive dot product still holds.
using Lanes4 = double __attribute__((vector_size(32)));
void dot_and_abs(const double* a, const double* b, std::int64_t n, double& dot, double& abs) {
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

struct Row {
  std::vector<std::int64_t> keys;  // visible keys
  // per visible key: the exact-data quantities (double, with margins) of (F1)
  // dist: max_k s_k - s_j (upper, lower); gap: LSE - s_j (upper, lower)
  std::vector<double> abs_dot, logit_abs, dist, dist_lo, gap, gap_lo, p_up, p_lo, p_mid;
  std::vector<bool> far;            // forward weight below 2^-kFarLog2 of the largest (F4)
  std::vector<double> arg_lse;      // absolute logit error in natural-log units (for LSE, backward)
  std::vector<double> rho;          // |P^_j - P_j| / P_j of the forward's weights (F5)
  double lse_abs = 0, log_den_lo = 0, lambda = 0, abs_weight = 0, lse_bound = 0;
  std::vector<double> o_bound, o_mag;  // per column
};

class GroupBounds {
 public:
  GroupBounds(const Problem& p, const Inputs& in, const ArithmeticConstants& k, bool backward,
              const std::vector<double>* d_error, GqaGradientReduction gqa, const OutputSample* wanted,
              ImplementationBounds& out)
      : p_(p), in_(in), k_(k), backward_(backward), d_error_(d_error), wanted_(wanted),
        per_head_rounded_(gqa == GqaGradientReduction::per_head_rounded && p.group_size() > 1), out_(out),
        mask_{p.mask_offset(), p.window_left, p.window_right},
        d_(p.head_dim), dot_len_(ceil_div(p.head_dim, k.dot_block) * k.dot_block),
        sig_(std::fabs(static_cast<double>(p.softmax_scale()))),
        steps_(k.flash ? ceil_div(p.seqlen_k, 16) + 2 : 0),
        lam_u_(lam(k.u)), lam_uh_(lam(k.dtype_u)), lam_exp_(lam(k.exp_rel)), lam_exp_chain_(lam(k.exp_rel + 5 * k.u)),
        exp_rounds_up_(std::exp(lam_uh_ + (2 * static_cast<double>(steps_) + 3) * lam_u_)),
        exp_rounds_lo_(std::exp(-lam_uh_ - (2 * static_cast<double>(steps_) + 3) * lam_u_)) {}

  // With a sample, a row is visited for its own outputs (O, LSE, dQ) or for a wanted key it sees
  // (its P and dS reach that key's dK, dV); nothing else is. A visited row's quantities depend on
  // that row alone, so the bounds of the wanted elements are those of the full computation.
  void run(std::int64_t b, std::int64_t hk) {
    const std::int64_t sk = p_.seqlen_k, d = d_;
    read_kv_rows(in_, b, hk, key_, val_);
    wanted_keys_.clear();  // forward: none (no row is visited for a key)
    if (backward_) {
      key_wanted_.assign(sk, 0);
      for (std::int64_t j = 0; j < sk; ++j)
        if (!wanted_ || wanted_->col((b * p_.heads_kv + hk) * sk + j)) wanted_keys_.push_back(j), key_wanted_[j] = 1;
      for (auto* acc : {&acc_sq_, &acc_dsq_, &acc_pdo_, &acc_phdo_}) acc->assign(sk * d, 0);
      if (d_error_) acc_pdq_.assign(sk * d, 0);
      rows_seeing_.assign(sk, 0);
      dk_column_conditional_.assign(sk, 0);
    }
    const std::int64_t g = p_.group_size();
    Row r;  // reused: every field is reset by forward_row
    for (std::int64_t h = hk * g; h < (hk + 1) * g; ++h)
      for (std::int64_t i = 0; i < p_.seqlen_q; ++i) {
        const bool row_wanted = !wanted_ || wanted_->row((b * p_.heads_q + h) * p_.seqlen_q + i);
        if (!row_wanted && std::none_of(wanted_keys_.begin(), wanted_keys_.end(),
                                        [&](std::int64_t j) { return mask_.visible(i, j); }))
          continue;
        r.keys.clear();
        forward_row(b, h, i, r, row_wanted);
        if (backward_) backward_row(b, h, i, r, row_wanted);
      }
    if (backward_) finish_columns(b, hk);
  }

 private:
  std::size_t o_index(std::int64_t b, std::int64_t i, std::int64_t h, std::int64_t c) const {
    return static_cast<std::size_t>(((b * p_.seqlen_q + i) * p_.heads_q + h) * d_ + c);
  }
  std::size_t kv_index(std::int64_t b, std::int64_t j, std::int64_t hk, std::int64_t c) const {
    return static_cast<std::size_t>(((b * p_.seqlen_k + j) * p_.heads_kv + hk) * d_ + c);
  }

  // (F1) The exact logits and probabilities, from double with margins: logit s_j = scale q.k_j
  // lies within err_j of the double value; P_j in [p_lo, p_up].
  void exact_softmax(std::int64_t b, std::int64_t h, std::int64_t i, Row& r) {
    const std::int64_t d = d_, n = static_cast<std::int64_t>(r.keys.size());
    const double g53 = gam(static_cast<double>(d), 0x1p-53), scale = p_.softmax_scale();
    q_.resize(d);
    in_.q.read_row(b, i, h, q_.data());
    std::vector<double>&sd = scratch(sd_, n), &err = scratch(err_, n);
    r.abs_dot.resize(n);
    for (std::int64_t x = 0; x < n; ++x) {
      double dot, abs_dot;
      dot_and_abs(q_.data(), &key_[r.keys[x] * d], d, dot, abs_dot);
      r.abs_dot[x] = abs_dot * (1 + 2 * g53);
      sd[x] = scale * dot;
      err[x] = sig_ * g53 * r.abs_dot[x] * (1 + 0x1p-50) + 0x1p-52 * std::fabs(sd[x]);
    }
    const double smax = *std::max_element(sd.begin(), sd.end());
    const double emax = *std::max_element(err.begin(), err.end());
    r.logit_abs.resize(n), r.dist.resize(n), r.dist_lo.resize(n), r.gap.resize(n), r.gap_lo.resize(n);
    r.p_up.resize(n), r.p_lo.resize(n), r.p_mid.resize(n);
    std::vector<double>&e = scratch(e_, n), &delta = scratch(delta_, n);
    double den_lo = 0, den_hi = 0, den = 0;
    for (std::int64_t x = 0; x < n; ++x) {
      const double diff = smax - sd[x];
      delta[x] = err[x] + 0x1p-53 * diff;  // |(s_j - smax) + diff| <= delta
      e[x] = std::exp(-diff);
      den += e[x];
      den_lo += e[x] * exp_neg_small(delta[x]);
      den_hi += e[x] * exp_small(delta[x]);
      r.logit_abs[x] = std::fabs(sd[x]) + err[x];
      r.dist[x] = diff * (1 + 0x1p-52) + emax + err[x];
      r.dist_lo[x] = std::max(0.0, diff * (1 - 0x1p-52) - emax - err[x]);
    }
    // The sums of n positive terms round within gamma_n(2^-53); 2^-48 covers each term's exp and
    // product roundings.
    const double sum_round = 0x1p-48 + gam(static_cast<double>(n), 0x1p-53);
    den_lo *= 1 - sum_round, den_hi *= 1 + sum_round;
    for (std::int64_t x = 0; x < n; ++x) {
      // Below 2^-1000 the double exp may underflow; such weights are all "far" (F4) anyway.
      r.p_up[x] = std::min(1.0, std::max(e[x] * exp_small(delta[x]) / den_lo * (1 + 0x1p-48), 0x1p-1000));
      r.p_lo[x] = e[x] * exp_neg_small(delta[x]) / den_hi * (1 - 0x1p-48);
      r.p_mid[x] = e[x] / den;
    }
    r.log_den_lo = std::log(den_lo) - 0x1p-50;
    double log_den_hi = std::log(den_hi) + 0x1p-50;
    // The double logits' own uncertainty delta, about d 2^-53 sum_c |q_c k_c|, passes 700 at
    // logits of 1e17 and more (inside the domain): e^delta overflows den_hi, e^-delta underflows den_lo,
    // and the LSE bound (through lse_abs) would be infinite. Every delta is at most dmax, so
    // e^-dmax den <= den_lo and den_hi <= e^dmax den (den in [1, n]) bound the logs instead; the
    // last term covers the rounding of that sum and of log (std::log within an ulp).
    if (!(den_lo >= 0x1p-1000) || !(den_hi <= 0x1p1000)) {
      const double dmax = *std::max_element(delta.begin(), delta.end());
      const double spread = dmax + 0x1p-50 * (64 + dmax);
      if (!(den_lo >= 0x1p-1000)) r.log_den_lo = std::log(den * (1 - sum_round)) - spread;
      if (!(den_hi <= 0x1p1000)) log_den_hi = std::log(den * (1 + sum_round)) + spread;
    }
    r.lse_abs = std::max(std::fabs(smax + r.log_den_lo), std::fabs(smax + log_den_hi)) * (1 + 0x1p-50);
    for (std::int64_t x = 0; x < n; ++x) {  // LSE - s_j = log(den) + (smax - s_j)
      const double diff = smax - sd[x];
      r.gap[x] = diff * (1 + 0x1p-52) + delta[x] + std::max(0.0, log_den_hi);
      r.gap_lo[x] = std::max(0.0, diff * (1 - 0x1p-52) - delta[x] + std::min(0.0, r.log_den_lo));
    }
  }

  // row_wanted: the row's O and LSE are wanted (otherwise it is computed for the backward's keys).
  void forward_row(std::int64_t b, std::int64_t h, std::int64_t i, Row& r, bool row_wanted) {
    const std::int64_t d = d_, sk = p_.seqlen_k;
    for (std::int64_t j = 0; j < sk; ++j)
      if (mask_.visible(i, j)) r.keys.push_back(j);
    const std::int64_t n = static_cast<std::int64_t>(r.keys.size());
    r.o_bound.assign(d, 0), r.o_mag.assign(d, 0);
    const std::size_t lse_at = static_cast<std::size_t>((b * p_.heads_q + h) * p_.seqlen_q + i);
    if (n == 0) {  // O = 0 and LSE = +inf exactly
      if (!row_wanted) return;
      for (std::int64_t c = 0; c < d; ++c) out_.o[o_index(b, i, h, c)] = 0;
      out_.lse[lse_at] = 0;
      return;
    }
    exact_softmax(b, h, i, r);
    const double u = k_.u, fl = k_.flush, kap = k_.scale_rel;
    const double nd = static_cast<double>(n);

    // (F2) Errors of the computed logits. flash: x^ = fl(S^ * c^) in log2 units; naive:
    // s^ = fl(S^ * scale) in natural units. Absolute (LSE, backward) and relative to the row's
    // max (O: a common error cancels in the normalisation).
    std::vector<double>&arg_o = scratch(arg_o_, n), &own = scratch(own_, n);
    r.arg_lse.resize(n);
    double dm = 0;
    const double g_dot = gam_products(static_cast<double>(dot_len_), k_, k_.sum_eta);
    for (std::int64_t x = 0; x < n; ++x) {
      if (k_.flash) {
        const double dot = kLog2e * sig_ * (1 + kap) * (g_dot * r.abs_dot[x] + dot_len_ * fl);
        own[x] = dot + u * (kLog2e * (1 + kap) * r.logit_abs[x] + dot) * (1 + u);
      } else {
        const double dot = sig_ * (g_dot * r.abs_dot[x] + d * fl);
        own[x] = dot + u * (r.logit_abs[x] + dot) * (1 + u);
      }
      dm = std::max(dm, own[x]);
    }
    // (F3) The shift x^_j - M^ and (flash) the rescale chain: each rounded relative to at most
    // R_j >= M^ - x^_j, twice for flash (the shift, and the chain's arguments summing to <= R_j).
    const double units = k_.flash ? kLn2 : 1.0, shifts = k_.flash ? 2 : 1;
    r.far.assign(n, false);
    for (std::int64_t x = 0; x < n; ++x) {
      const double dist_units = k_.flash ? kLog2e * (1 + kap) * r.dist[x] : r.dist[x];
      const double reach = dist_units + 2 * dm;
      const double common_o = kap * kLog2e * r.dist[x], common_lse = kap * kLog2e * r.logit_abs[x];
      arg_o[x] = units * (own[x] + common_o + shifts * u * reach);
      r.arg_lse[x] = units * (own[x] + common_lse + shifts * u * reach);
      // (F4) far: the computed exponent x^_j - M^ <= x^_j - x^_j* and the exact one are both below
      // -kFarLog2 (log2 units), so both weights are below 2^-kFarLog2 of the largest.
      const double exponent_up = k_.flash ? -(1 - kap) * kLog2e * r.dist_lo[x] + 2 * dm + shifts * u * reach
                                          : kLog2e * (-r.dist_lo[x] + 2 * dm + u * reach);
      r.far[x] = -exponent_up - 1 >= kFarLog2 && kLog2e * r.dist_lo[x] >= kFarLog2;
    }
    const double steps = static_cast<double>(steps_);
    const double weight_log = lam_exp_ + steps * lam_exp_chain_;
    const double g_sum = gam_products(nd + steps, k_, k_.sum_eta);
    const double l_low = 1 - g_sum - steps * u * 1.01;  // the max weight is exp2(0) = 1 (F5)
    const double abs_one = (k_.flash ? (steps + 1) * fl : 2 * fl);
    double far_count = 0;
    for (std::int64_t x = 0; x < n; ++x) far_count += r.far[x];
    const double zeta = (nd * abs_one + far_count * kFarWeight) / l_low;
    double lambda = 0, lse_arg = 0;
    for (std::int64_t x = 0; x < n; ++x) {
      if (r.far[x]) continue;
      lambda = std::max(lambda, exp_small(arg_o[x] + weight_log) * (1 + g_sum) * (1 + zeta) - 1);
      lse_arg = std::max(lse_arg, r.arg_lse[x]);
    }
    r.lambda = lambda;
    const double numer_round = lam_uh_ + (k_.flash ? 0 : lam_u_);  // P rounded (naive: divided first)
    r.rho.assign(n, kInf);
    for (std::int64_t x = 0; x < n; ++x)
      if (!r.far[x])
        r.rho[x] = lambda < 1 ? exp_small(arg_o[x] + weight_log + numer_round) * (1 + g_sum) / (1 - lambda) - 1 : kInf;
    r.abs_weight = (k_.dtype_abs + abs_one + kFarWeight) * (1 + zeta) / l_low;

    // O's bound is the row's output, and the flash backward's D takes it (B3); naive's does not.
    if (row_wanted || k_.flash) o_bound_row(b, h, i, r, row_wanted, g_sum, zeta, l_low);

    // (F7) LSE = M^ ln 2 + log l^ (flash) or m + log l^ (naive).
    const double inner = lse_arg + weight_log + lam(g_sum) + lam(zeta);
    const double log_l = std::max(std::log(nd) + steps * lam_u_ + lam(g_sum) + zeta, -std::log(l_low * (1 - zeta)));
    double max_rounded = 0;  // |M^| in log2 units
    for (std::int64_t x = 0; x < n; ++x) max_rounded = std::max(max_rounded, kLog2e * (1 + kap) * r.logit_abs[x] + own[x]);
    const double scale_back = k_.flash ? (2 * u + u * u) * kLn2 * max_rounded : 0;  // fl(M^ * ln2f)
    const double before_sum = inner + scale_back + k_.log_rel * log_l;
    r.lse_bound = before_sum + u * (r.lse_abs + before_sum);
    if (row_wanted) out_.lse[lse_at] = r.lse_bound;
  }

  // (F5) O_c = sum_j pi^_j v_jc (1 + phi_j) against sum_j P_j v_jc, then the final division and
  // the rounding to the dtype; capped by (F6), the convex-combination bound. Sets r.o_bound, r.o_mag.
  void o_bound_row(std::int64_t b, std::int64_t h, std::int64_t i, Row& r, bool row_wanted, double g_sum,
                   double zeta, double l_low) {
    const std::int64_t d = d_, n = static_cast<std::int64_t>(r.keys.size());
    const double u = k_.u, uh = k_.dtype_u, fl = k_.flush, nd = static_cast<double>(n);
    const double t_up = exp_rounds_up_ * (1 + zeta) / (1 - g_sum) - 1 +
                        nd * r.abs_weight;
    const double t_lo = 1 - exp_rounds_lo_ * (1 - zeta) / (1 + g_sum) +
                        nd * r.abs_weight;
    const double t = std::max(t_up, t_lo);
    // Per column, over the keys (key-major, so the inner loop runs along a row of V).
    col_mag_.assign(d, 0), col_err_.assign(d, 0), col_abs_.assign(d, 0);
    col_min_.assign(d, kInf), col_max_.assign(d, -kInf);
    // Loop-invariant tests hoisted out of the column loops, so that they vectorise: with rho
    // finite (and pu |v| >= 0 finite), mul0(pu |v|, rho) is the plain product.
    double *__restrict cmin = col_min_.data(), *__restrict cmax = col_max_.data(), *__restrict cabs = col_abs_.data();
    double *__restrict cmag = col_mag_.data(), *__restrict cerr = col_err_.data();
    for (std::int64_t x = 0; x < n; ++x) {
      const double* __restrict vx = &val_[r.keys[x] * d];
      for (std::int64_t c = 0; c < d; ++c) {
        const double v = vx[c];
        cmin[c] = std::min(cmin[c], v), cmax[c] = std::max(cmax[c], v);
        cabs[c] += std::fabs(v);
      }
      if (r.far[x]) continue;
      const double pu = r.p_up[x], rho = r.rho[x];
      if (std::isfinite(rho)) {
        for (std::int64_t c = 0; c < d; ++c) {
          const double m = pu * std::fabs(vx[c]);
          cmag[c] += m;
          cerr[c] += m * rho;
        }
      } else {
        for (std::int64_t c = 0; c < d; ++c) {
          const double m = pu * std::fabs(vx[c]);
          cmag[c] += m;
          cerr[c] += mul0(m, rho);
        }
      }
    }
    for (std::int64_t c = 0; c < d; ++c) {
      double mag = col_mag_[c], err = col_err_[c];
      const double sum_abs = col_abs_[c], vmin = col_min_[c], vmax = col_max_[c];
      err += r.abs_weight * sum_abs + nd * fl / l_low;  // + products P v that underflow
      const double vabs = std::max(std::fabs(vmin), std::fabs(vmax));
      mag = std::min(mag + kFarWeight * sum_abs, vabs);
      const double before_div = err + 2.0001 * u * (mag + err);
      const double general = before_div + uh * (mag + before_div) + k_.dtype_abs;
      const double cap = (vmax - vmin) + (t + g_sum * (1 + t)) * vabs + uh * vabs * (1 + t + g_sum) + k_.dtype_abs;
      r.o_bound[c] = std::min(general, cap);
      r.o_mag[c] = mag;
      if (row_wanted) out_.o[o_index(b, i, h, c)] = r.o_bound[c];
    }
  }

  // (B1)-(B6): P recomputed (flash: from the stored LSE; naive: the forward's P), dP, D, dS, and
  // their contributions to dQ (this row, when wanted) and to dK, dV (accumulated per wanted key).
  void backward_row(std::int64_t b, std::int64_t h, std::int64_t i, Row& r, bool row_wanted) {
    const std::int64_t d = d_, n = static_cast<std::int64_t>(r.keys.size());
    if (n == 0) {
      if (row_wanted)
        for (std::int64_t c = 0; c < d; ++c) out_.dq[o_index(b, i, h, c)] = 0;
      return;
    }
    const double u = k_.u, uh = k_.dtype_u, fl = k_.flush, nd = static_cast<double>(n);
    const double g53 = gam(static_cast<double>(d), 0x1p-53);
    dout_.resize(d);
    in_.dout.read_row(b, i, h, dout_.data());

    // Exact dP_j = dO . v_j (double, with its error) and D = sum_j P_j dP_j.
    std::vector<double>&dp = scratch(dp_, n), &dp_abs = scratch(dp_abs_, n);
    for (std::int64_t x = 0; x < n; ++x) {
      double s, a;
      dot_and_abs(dout_.data(), &val_[r.keys[x] * d], d, s, a);
      dp[x] = s, dp_abs[x] = a * (1 + 2 * g53);
    }
    double dd = 0, dd_err = 0, dd_abs = 0;
    for (std::int64_t x = 0; x < n; ++x) {
      dd += r.p_mid[x] * dp[x];
      dd_abs += r.p_mid[x] * std::fabs(dp[x]);
      dd_err += std::max(r.p_up[x] - r.p_mid[x], r.p_mid[x] - r.p_lo[x]) * dp_abs[x] + r.p_mid[x] * g53 * dp_abs[x];
    }
    dd_err += gam(nd, 0x1p-53) * dd_abs + 0x1p-1000;

    // (B1) |P^ - P| for the fp32 P (flash dS) and the P rounded to the dtype (dV; naive: both).
    std::vector<double>&p_err = scratch(p_err_, n), &ph_err = scratch(ph_err_, n), &p_hat = scratch(p_hat_, n),
                        &ph_hat = scratch(ph_hat_, n);
    const double lse_term = r.lse_bound + (r.lse_abs + r.lse_bound) * (2 * u + u * u);
    const double lam_exp = lam_exp_, lam_uh = lam_uh_;
    for (std::int64_t x = 0; x < n; ++x) {
      if (k_.flash) {
        const double theta = r.arg_lse[x] + lse_term + u * (r.gap[x] + r.arg_lse[x] + lse_term) + lam_exp;
        // Far (F4): the exact exponent (s_j - LSE) log2(e) and the computed one are below -kFarLog2.
        const bool far = kLog2e * (r.gap_lo[x] - theta) >= kFarLog2;
        p_err[x] = far ? kFarWeight : std::min(mul0(r.p_up[x], std::expm1(theta)) + fl, 1.0);
        ph_err[x] = far ? kFarWeight : std::min(mul0(r.p_up[x], std::expm1(theta + lam_uh)) + fl * (1 + uh) + k_.dtype_abs, 1.0);
      } else {
        const double e = r.far[x] ? kFarWeight : mul0(r.p_up[x], r.rho[x]);
        ph_err[x] = p_err[x] = std::min(e + r.abs_weight, 1.0);
      }
      p_hat[x] = std::min(r.p_up[x] + p_err[x], 1.0);
      ph_hat[x] = std::min(r.p_up[x] + ph_err[x], 1.0);
    }

    // (B2) dP, (B3) D. Where dP (naive) or dS may pass the dtype's largest value, the row's bounds
    // are conditional (ImplementationBounds::dq_conditional): the formulas below take every rounding
    // as relative, which holds exactly when nothing overflowed.
    bool overflow_possible = false;
    std::vector<double>& dp_err = scratch(dp_err_, n);
    double d_err = 0;
    if (k_.flash) {
      const double g = gam_products(static_cast<double>(dot_len_), k_, k_.sum_eta);
      for (std::int64_t x = 0; x < n; ++x) dp_err[x] = g * dp_abs[x] + dot_len_ * fl;
      const double gd = gam_products(static_cast<double>(d), k_, u);
      for (std::int64_t c = 0; c < d; ++c) {
        const double a = std::fabs(dout_[c]);
        d_err += a * r.o_bound[c] + gd * a * (r.o_mag[c] + r.o_bound[c]);
      }
      d_err += d * fl;
    } else {
      const double g = gam_products(static_cast<double>(d), k_, u);
      double sum_abs = 0;
      for (std::int64_t x = 0; x < n; ++x) {
        const double before = g * dp_abs[x] + d * fl;
        dp_err[x] = before + uh * (dp_abs[x] + before) + k_.dtype_abs;  // dP rounded to the dtype
        overflow_possible = overflow_possible || dp_abs[x] + dp_err[x] > k_.dtype_max;
        const double dph = dp_abs[x] + dp_err[x];
        d_err += ph_err[x] * dph + r.p_up[x] * dp_err[x];
        sum_abs += ph_hat[x] * dph;
      }
      d_err += gam_products(nd, k_, u) * sum_abs + nd * fl;
    }

    // (B4) dS = P (dP - D), rounded to the dtype.
    std::vector<double>&sigma = scratch(sigma_, n), &ds_up = scratch(ds_up_, n);
    for (std::int64_t x = 0; x < n; ++x) {
      const double x_up = std::fabs(dp[x] - dd) * (1 + 0x1p-52) + g53 * dp_abs[x] + dd_err;
      const double x_err = (dp_err[x] + d_err) * (1 + u) + u * (x_up + dp_err[x] + d_err);
      const double x_hat = x_up + x_err;
      const double pe = k_.flash ? p_err[x] : ph_err[x], ph = k_.flash ? p_hat[x] : ph_hat[x];
      sigma[x] = pe * x_hat + r.p_up[x] * x_err + (u + uh + u * uh) * ph * x_hat + k_.dtype_abs;
      ds_up[x] = r.p_up[x] * x_up + sigma[x];
      overflow_possible = overflow_possible || ph * x_hat * (1 + u) > k_.dtype_max;
    }

    if (row_wanted) dq_bound(b, h, i, r, overflow_possible);
    if (overflow_possible)
      for (std::int64_t j : r.keys) dk_column_conditional_[j] = 1;
    add_column_terms(r);
    if (d_error_) d_error_shares(b, h, i, r, row_wanted);
  }

  // (B5) dQ_c = scale sum_j dS_j k_jc, from sigma_ and ds_up_ (set by (B4)).
  void dq_bound(std::int64_t b, std::int64_t h, std::int64_t i, const Row& r, bool overflow_possible) {
    const std::int64_t d = d_, n = static_cast<std::int64_t>(r.keys.size());
    const double u = k_.u, fl = k_.flush, nd = static_cast<double>(n);
    const std::vector<double>&sigma = sigma_, &ds_up = ds_up_;
    const double g_q = k_.flash ? gam_products(nd + ceil_div(p_.seqlen_k, 16) + 2, k_, k_.sum_eta)
                                : gam_products(nd, k_, u);
    col_err_.assign(d, 0), col_mag_.assign(d, 0);  // key-major: rows of K in the inner loop
    // The per-key factors in locals and the rows as restrict pointers: the column loops vectorise.
    double* __restrict cerr = col_err_.data();
    double* __restrict cmag = col_mag_.data();
    for (std::int64_t x = 0; x < n; ++x) {
      const double* __restrict kx = &key_[r.keys[x] * d];
      const double sx = sigma[x], ux = ds_up[x];
      for (std::int64_t c = 0; c < d; ++c) {
        const double a = std::fabs(kx[c]);
        cerr[c] += sx * a, cmag[c] += ux * a;
      }
    }
    for (std::int64_t c = 0; c < d; ++c) {  // + underflowing products
      out_.dq[o_index(b, i, h, c)] = scaled_sum_bound(col_err_[c] + nd * fl, col_mag_[c], g_q);
      if (overflow_possible) out_.dq_conditional[o_index(b, i, h, c)] = 1;
    }
  }

  // (B6) the row's contributions to dK_jc = scale sum_i dS_ij q_ic (from sigma_ and ds_up_) and
  // dV_jc = sum_i P_ij dO_ic (from ph_err_ and ph_hat_, set by (B1)), accumulated per wanted key.
  void add_column_terms(const Row& r) {
    const std::int64_t d = d_, n = static_cast<std::int64_t>(r.keys.size());
    for (std::int64_t x = 0; x < n; ++x) {
      const std::int64_t j = r.keys[x];
      if (!key_wanted_[j]) continue;
      ++rows_seeing_[j];
      const double sx = sigma_[x], ux = ds_up_[x], ex = ph_err_[x], hx = ph_hat_[x];
      const double *__restrict q = q_.data(), *__restrict dout = dout_.data();
      double* __restrict sq = acc_sq_.data() + j * d;
      double* __restrict dsq = acc_dsq_.data() + j * d;
      double* __restrict pdo = acc_pdo_.data() + j * d;
      double* __restrict phdo = acc_phdo_.data() + j * d;
      for (std::int64_t c = 0; c < d; ++c) {
        const double aq = std::fabs(q[c]);
        sq[c] += sx * aq;
        dsq[c] += ux * aq;
        const double ado = std::fabs(dout[c]);
        pdo[c] += ex * ado;
        phdo[c] += hx * ado;
      }
    }
  }

  // The shares of D's error e_i in this row's dQ (when wanted) and, accumulated per wanted key, in dK
  // (ImplementationBounds::dq_from_d_error).
  void d_error_shares(std::int64_t b, std::int64_t h, std::int64_t i, const Row& r, bool row_wanted) {
    const std::int64_t d = d_, n = static_cast<std::int64_t>(r.keys.size());
    const double e = (*d_error_)[static_cast<std::size_t>((b * p_.heads_q + h) * p_.seqlen_q + i)];
    col_abs_.assign(d, 0);
    double* __restrict pk = col_abs_.data();  // sum_j P_j |k_jc|
    const double* __restrict q = q_.data();
    for (std::int64_t x = 0; x < n; ++x) {
      const std::int64_t j = r.keys[x];
      const double* __restrict kx = &key_[j * d];
      double* __restrict pq = acc_pdq_.data() + j * d;
      const double px = r.p_up[x], pe = px * e;
      if (row_wanted)
        for (std::int64_t c = 0; c < d; ++c) pk[c] += px * std::fabs(kx[c]);
      if (key_wanted_[j])
        for (std::int64_t c = 0; c < d; ++c) pq[c] += pe * std::fabs(q[c]);
    }
    if (row_wanted)
      for (std::int64_t c = 0; c < d; ++c) out_.dq_from_d_error[o_index(b, i, h, c)] = sig_ * e * col_abs_[c];
  }

  // |fl_dtype(fl(y^ * scale)) - scale y| with |y^ - y| <= s1 + g s2 and |y| <= s2.
  double scaled_sum_bound(double s1, double s2, double g) const {
    const double u = k_.u, uh = k_.dtype_u;
    const double e = sig_ * (s1 + g * s2);
    const double e1 = e + u * (sig_ * s2 + e);
    return e1 + uh * (sig_ * s2 + e1) + k_.dtype_abs;
  }

  // per_head_rounded: the g heads' shares, each within `bound` of its exact value together and of
  // magnitude `mag` together, are each rounded to the dtype (u_h relative, a_h absolute) and summed
  // in fp32 (gamma_g) before the final rounding that `bound` already holds.
  double per_head(double bound, double mag) const {
    if (!per_head_rounded_) return bound;
    const double g = static_cast<double>(p_.group_size());
    const double rounded = k_.dtype_u * (mag + bound) + g * k_.dtype_abs;
    return bound + (rounded + gam(g, k_.u) * (mag + bound + rounded)) * (1 + k_.dtype_u);
  }

  void finish_columns(std::int64_t b, std::int64_t hk) {
    const std::int64_t d = d_, g = p_.group_size();
    for (std::int64_t j : wanted_keys_) {
      const double rows = static_cast<double>(rows_seeing_[j]);
      const double g_k = k_.flash ? gam_products(rows + g * ceil_div(p_.seqlen_q, 16) + 2, k_, k_.sum_eta)
                                  : gam_products(rows, k_, k_.u);
      const double underflow = rows * k_.flush;  // products dS q and P dO below 2^-126
      for (std::int64_t c = 0; c < d; ++c) {
        const std::size_t at = kv_index(b, j, hk, c), a = static_cast<std::size_t>(j * d + c);
        if (rows == 0) {  // no row sees the key: dK = dV = 0 exactly
          out_.dk[at] = out_.dv[at] = 0;
          continue;
        }
        out_.dk[at] = per_head(scaled_sum_bound(acc_sq_[a] + underflow, acc_dsq_[a], g_k), sig_ * acc_dsq_[a]);
        out_.dk_conditional[at] = dk_column_conditional_[j];
        if (d_error_) out_.dk_from_d_error[at] = sig_ * acc_pdq_[a];
        const double e = acc_pdo_[a] + g_k * acc_phdo_[a] + underflow;
        out_.dv[at] = per_head(e + k_.dtype_u * (acc_phdo_[a] + e) + k_.dtype_abs, acc_phdo_[a]);
      }
    }
  }

  const Problem& p_;
  const Inputs& in_;
  const ArithmeticConstants& k_;
  bool backward_;
  const std::vector<double>* d_error_;
  const OutputSample* wanted_;  // null: every output
  bool per_head_rounded_;  // GqaGradientReduction::per_head_rounded with a group of several heads
  ImplementationBounds& out_;
  algo::WindowMask<std::int64_t> mask_;
  std::int64_t d_, dot_len_;
  double sig_;
  std::int64_t steps_;  // flash: rescale steps a weight can pass through (F3)
  // The case's constants of the formulas, computed once rather than per row: lam of the roundings
  // (u, the dtype's, exp's, a rescale step's) and the exp of (F5)'s rounding chain, up and down.
  double lam_u_, lam_uh_, lam_exp_, lam_exp_chain_, exp_rounds_up_, exp_rounds_lo_;
  // Per-key scratch of one row, reused by every row (each is written in full before it is read).
  std::vector<double> sd_, err_, e_, delta_, arg_o_, own_, dp_, dp_abs_, p_err_, ph_err_, p_hat_, ph_hat_,
      dp_err_, sigma_, ds_up_;
  static std::vector<double>& scratch(std::vector<double>& v, std::int64_t n) {
    v.resize(static_cast<std::size_t>(n));
    return v;
  }
  std::vector<double> key_, val_, q_, dout_;
  std::vector<double> col_mag_, col_err_, col_abs_, col_min_, col_max_;  // per-column scratch
  std::vector<double> acc_sq_, acc_dsq_, acc_pdo_, acc_phdo_;
  std::vector<double> acc_pdq_;  // sum_i P_ij e_i |q_ic| (dk_from_d_error)
  std::vector<std::int64_t> rows_seeing_;
  std::vector<std::uint8_t> dk_column_conditional_;  // a row seeing the key may overflow dP or dS
  // The backward's wanted keys of the group (every key without a sample), as a list and per key.
  std::vector<std::int64_t> wanted_keys_;
  std::vector<std::uint8_t> key_wanted_;
};

void require_shape(const HostTensor& t, const Shape& s, const char* name) {
  if (t.shape() != s) throw std::invalid_argument(std::string("implementation_bounds: ") + name + " has the wrong shape");
}

// Evaluation margin: the formulas are evaluated in double, a few dozen operations per term.
void finalize(std::vector<double>& v) {
  for (double& x : v) x = std::isnan(x) ? kInf : x * (1 + 0x1p-16);
}

}  // namespace

ImplementationBounds infinite_bounds(const Problem& p, bool backward) {
  const auto numel = [](const Shape& s) { return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]); };
  ImplementationBounds out;
  out.o.assign(numel(p.q_shape()), kInf);
  out.lse.assign(numel(p.lse_shape()), kInf);
  if (backward) {
    out.dq.assign(numel(p.q_shape()), kInf);
    out.dk.assign(numel(p.kv_shape()), kInf);
    out.dv.assign(numel(p.kv_shape()), kInf);
    out.dq_from_d_error.assign(numel(p.q_shape()), 0);
    out.dk_from_d_error.assign(numel(p.kv_shape()), 0);
    out.dq_conditional.assign(numel(p.q_shape()), 0);
    out.dk_conditional.assign(numel(p.kv_shape()), 0);
  }
  return out;
}

ImplementationBounds implementation_bounds(const Problem& p, const Inputs& in, ArithmeticModel model,
                                           bool backward, int threads, const std::vector<double>* d_error,
                                           GqaGradientReduction gqa, const OutputSample* wanted) {
  if (const std::string e = p.validate(); !e.empty()) throw std::invalid_argument(e);
  require_shape(in.q, p.q_shape(), "Q");
  require_shape(in.k, p.kv_shape(), "K");
  require_shape(in.v, p.kv_shape(), "V");
  if (backward) require_shape(in.dout, p.q_shape(), "dO");
  if (d_error && d_error->size() != static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q))
    throw std::invalid_argument("implementation_bounds: d_error has the wrong size");
  if (wanted && (static_cast<std::int64_t>(wanted->rows.size()) != p.batch * p.heads_q * p.seqlen_q ||
                 static_cast<std::int64_t>(wanted->cols.size()) != p.batch * p.heads_kv * p.seqlen_k))
    throw std::invalid_argument("implementation_bounds: the sample's rows and columns do not match the problem");
  const ArithmeticConstants k = constants_for(model, p.dtype);
  ImplementationBounds out = infinite_bounds(p, backward);
  parallel_for(
      p.batch * p.heads_kv,
      [&](std::int64_t item) {
        GroupBounds group(p, in, k, backward, d_error, gqa, wanted, out);
        group.run(item / p.heads_kv, item % p.heads_kv);
      },
      threads);
  for (auto* v : {&out.o, &out.lse, &out.dq, &out.dk, &out.dv, &out.dq_from_d_error, &out.dk_from_d_error})
    finalize(*v);
  return out;
}

}  // namespace flashproof::bounds
