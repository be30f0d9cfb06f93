#include "bounds/backward_row.h"

#include <algorithm>
#include <cmath>

#include "bounds/bound_arithmetic.h"
#include "bounds/score_mod_terms.h"

namespace flashproof::bounds {

void BackwardRowBounds::compute(const CaseConstants& cs, const GroupInputs& g, const Row& r, bool dq_wanted,
                                RowGradientTerms& t) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  const ArithmeticConstants& k = cs.k;
  const double u = k.u, uh = k.dtype_u, fl = k.flush, nd = static_cast<double>(n);
  const double g53 = gam(static_cast<double>(d), 0x1p-53);

  // Exact dP_j = dO . v_j (double, with its error) and D = sum_j P_j dP_j.
  std::vector<double>&dp = sized(dp_, n), &dp_abs = sized(dp_abs_, n);
  for (std::int64_t x = 0; x < n; ++x) {
    double s, a;
    dot_and_abs(r.dout.data(), &g.values[r.keys[x] * d], d, s, a);
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
  std::vector<double>&p_err = sized(p_err_, n), &ph_err = sized(t.ph_err, n), &p_hat = sized(p_hat_, n),
                      &ph_hat = sized(t.ph_hat, n);
  const double lse_term = r.lse_bound + (r.lse_abs + r.lse_bound) * (2 * u + u * u);
  const double lam_exp = cs.lam_exp, lam_uh = cs.lam_uh;
  // (B1') A backward that recomputes every logit bit for bit as its forward did (declared:
  // AttentionImpl::backward_recomputes_forward_logits) shares their errors with the LSE it is given:
  // P^_j = P~_j e^{t}, P~ the exact softmax of the computed logits (within the forward's rho_j of P,
  // (F5')) and |t| <= theta_c, the LSE's own roundings against the computed logits and the
  // recomputation's. The lesser of the two bounds is kept.
  const bool shared = k.flash && cs.recomputed_logits;
  const double lse_term_c = r.lse_bound_computed + (r.lse_abs + r.lse_bound) * (2 * u + u * u);
  for (std::int64_t x = 0; x < n; ++x) {
    if (k.flash) {
      const double theta = r.arg_lse[x] + lse_term + u * (r.gap[x] + r.arg_lse[x] + lse_term) + lam_exp;
      // Far (F4): the exact exponent (s_j - LSE) log2(e) and the computed one are below -kFarLog2.
      const bool far = kLog2e * (r.gap_lo[x] - theta) >= kFarLog2;
      p_err[x] = far ? kFarWeight : std::min(mul0(r.p_up[x], std::expm1(theta)) + fl, 1.0);
      ph_err[x] = far ? kFarWeight : std::min(mul0(r.p_up[x], std::expm1(theta + lam_uh)) + fl * (1 + uh) + k.dtype_abs, 1.0);
      if (shared) {
        const double theta_c = lse_term_c + u * (r.gap[x] + r.arg_lse[x] + lse_term) + lam_exp;
        // A key far in the forward (F4) has P and P~ below 2^-kFarLog2, and P^ below e^theta_c that.
        const bool far_c = r.far[x] && theta_c < 8;
        const double rel = theta_c + std::log1p(r.rho[x]);  // rho = +inf: no bound from here
        p_err[x] = std::min(p_err[x], far_c ? kFarWeight : mul0(r.p_up[x], std::expm1(rel)) + fl);
        ph_err[x] = std::min(ph_err[x], far_c ? kFarWeight
                                              : mul0(r.p_up[x], std::expm1(rel + lam_uh)) + fl * (1 + uh) + k.dtype_abs);
      }
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
  std::vector<double>& dp_err = sized(dp_err_, n);
  double d_err = 0;
  if (k.flash) {
    const double gp = gam_products(static_cast<double>(cs.dot_len), k, k.sum_eta);
    for (std::int64_t x = 0; x < n; ++x) dp_err[x] = gp * dp_abs[x] + cs.dot_len * fl;
    const double gd = gam_products(static_cast<double>(d), k, u);
    for (std::int64_t c = 0; c < d; ++c) {
      const double a = std::fabs(r.dout[c]);
      d_err += a * r.o_bound[c] + gd * a * (r.o_mag[c] + r.o_bound[c]);
    }
    d_err += d * fl;
  } else {
    const double gp = gam_products(static_cast<double>(d), k, u);
    double sum_abs = 0;
    for (std::int64_t x = 0; x < n; ++x) {
      const double before = gp * dp_abs[x] + d * fl;
      dp_err[x] = before + uh * (dp_abs[x] + before) + k.dtype_abs;  // dP rounded to the dtype
      overflow_possible = overflow_possible || dp_abs[x] + dp_err[x] > k.dtype_max;
      const double dph = dp_abs[x] + dp_err[x];
      d_err += ph_err[x] * dph + r.p_up[x] * dp_err[x];
      sum_abs += ph_hat[x] * dph;
    }
    d_err += gam_products(nd, k, u) * sum_abs + nd * fl;
  }

  // (B4) dS = P (dP - D), rounded to the dtype.
  std::vector<double>&sigma = sized(t.sigma, n), &ds_up = sized(t.ds_up, n);
  for (std::int64_t x = 0; x < n; ++x) {
    const double x_up = std::fabs(dp[x] - dd) * (1 + 0x1p-52) + g53 * dp_abs[x] + dd_err;
    const double x_err = (dp_err[x] + d_err) * (1 + u) + u * (x_up + dp_err[x] + d_err);
    const double x_hat = x_up + x_err;
    const double pe = k.flash ? p_err[x] : ph_err[x], ph = k.flash ? p_hat[x] : ph_hat[x];
    sigma[x] = pe * x_hat + r.p_up[x] * x_err + (u + uh + u * uh) * ph * x_hat + k.dtype_abs;
    ds_up[x] = r.p_up[x] * x_up + sigma[x];
    overflow_possible = overflow_possible || ph * x_hat * (1 + u) > k.dtype_max;
    if (cs.p.softcap) {
      // (M3) Through the cap: dS' = g dS, computed as fl(dS^ g^) and rounded to the dtype again.
      const CapDerivative gd = cap_derivative(cs, r.raw_err[x], r.raw_lo[x], r.raw_up[x]);
      const double ds_exact = r.p_up[x] * x_up;
      sigma[x] = gd.g_err * ds_up[x] + gd.g_up * sigma[x] + (gd.g_up + gd.g_err) * ds_up[x] * (u + uh + u * uh) +
                 k.dtype_abs;
      ds_up[x] = gd.g_up * ds_exact + sigma[x];
    }
  }
  t.overflow_possible = overflow_possible;

  if (dq_wanted) dq_bound(cs, g, r, t);
}

void BackwardRowBounds::dq_bound(const CaseConstants& cs, const GroupInputs& g, const Row& r,
                                 RowGradientTerms& t) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  const double u = cs.k.u, fl = cs.k.flush, nd = static_cast<double>(n);
  const double g_q = cs.k.flash ? gam_products(nd + ceil_div(cs.p.max_seqlen_k(), 16) + 2, cs.k, cs.k.sum_eta)
                                : gam_products(nd, cs.k, u);
  col_err_.assign(d, 0), col_mag_.assign(d, 0);  // key-major: rows of K in the inner loop
  // The per-key factors in locals and the rows as restrict pointers: the column loops vectorise.
  double* __restrict cerr = col_err_.data();
  double* __restrict cmag = col_mag_.data();
  for (std::int64_t x = 0; x < n; ++x) {
    const double* __restrict kx = &g.keys[r.keys[x] * d];
    const double sx = t.sigma[x], ux = t.ds_up[x];
    for (std::int64_t c = 0; c < d; ++c) {
      const double a = std::fabs(kx[c]);
      cerr[c] += sx * a, cmag[c] += ux * a;
    }
  }
  t.dq.resize(d);
  for (std::int64_t c = 0; c < d; ++c)  // + underflowing products
    t.dq[c] = cs.scaled_sum_bound(col_err_[c] + nd * fl, col_mag_[c], g_q);
}

void BackwardRowBounds::dq_from_d_error(const CaseConstants& cs, const GroupInputs& g, const Row& r, double e,
                                        std::vector<double>& dq_share) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  col_abs_.assign(d, 0);
  double* __restrict pk = col_abs_.data();  // sum_j P_j |k_jc|
  for (std::int64_t x = 0; x < n; ++x) {
    const double* __restrict kx = &g.keys[r.keys[x] * d];
    const double px = r.p_up[x];
    for (std::int64_t c = 0; c < d; ++c) pk[c] += px * std::fabs(kx[c]);
  }
  dq_share.resize(d);
  for (std::int64_t c = 0; c < d; ++c) dq_share[c] = cs.sig * e * col_abs_[c];
}

}  // namespace flashproof::bounds
