#include "bounds/output_bound.h"

#include <algorithm>
#include <cmath>

#include "bounds/bound_arithmetic.h"

namespace flashproof::bounds {

void OutputBound::compute(const CaseConstants& cs, const std::vector<double>& value_rows, Row& r, double g_sum,
                          double zeta, double l_low) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  const double u = cs.k.u, uh = cs.k.dtype_u, fl = cs.k.flush, nd = static_cast<double>(n);
  // (F6) with (S1): however wrong the partial LSEs, a split-KV combine's coefficients c_s / L sum to
  // 1 up to its own roundings (split_sum), so the weights' sum moves by that factor only.
  const double t_up = cs.exp_rounds_up * (1 + cs.split_sum) * (1 + zeta) / (1 - g_sum) - 1 + nd * r.abs_weight;
  const double t_lo = 1 - cs.exp_rounds_lo * (1 - cs.split_sum) * (1 - zeta) / (1 + g_sum) + nd * r.abs_weight;
  const double t = std::max(t_up, t_lo);
  // Per column, over the keys (key-major, so the inner loop runs along a row of V).
  col_mag_.assign(d, 0), col_err_.assign(d, 0), col_abs_.assign(d, 0);
  col_min_.assign(d, kInf), col_max_.assign(d, -kInf);
  // Loop-invariant tests hoisted out of the column loops, so that they vectorise: with rho
  // finite (and pu |v| >= 0 finite), mul0(pu |v|, rho) is the plain product.
  double *__restrict cmin = col_min_.data(), *__restrict cmax = col_max_.data(), *__restrict cabs = col_abs_.data();
  double *__restrict cmag = col_mag_.data(), *__restrict cerr = col_err_.data();
  for (std::int64_t x = 0; x < n; ++x) {
    const double* __restrict vx = &value_rows[r.keys[x] * d];
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
  // (F5') Centred: O^_c - O_c = sum_j (w^_j - P_j)(v_jc - a_c) + a_c (sum_j w^_j - 1) for any a_c,
  // with w^_j the computed weights (|w^_j - P_j| <= P_j rho_j + abs_weight, their sum within
  // t + g(1 + t) of 1). With a_c the value of the key that carries the row, its own weight's error,
  // as large as the logits' rounding makes it, multiplies 0: the other keys' small weights carry
  // the bound. Worth its cost only where the weights' errors are large (rho above 1/64).
  double max_rho = 0;
  std::int64_t top = -1;
  for (std::int64_t x = 0; x < n; ++x)
    if (!r.far[x]) {
      max_rho = std::max(max_rho, r.rho[x]);
      if (top < 0 || r.p_lo[x] > r.p_lo[top]) top = x;
    }
  const bool centred = top >= 0 && max_rho > 1.0 / 64;
  if (centred) {
    col_top_.assign(d, 0), col_mid_.assign(d, 0);
    const double* vt = &value_rows[r.keys[top] * d];
    const double sum_off = t + g_sum * (1 + t);
    for (std::int64_t x = 0; x < n; ++x) {
      const double* vx = &value_rows[r.keys[x] * d];
      const double w = r.far[x] ? r.abs_weight : mul0(r.p_up[x], r.rho[x]) + r.abs_weight;
      for (std::int64_t c = 0; c < d; ++c) {
        const double mid = 0.5 * (cmin[c] + cmax[c]);
        col_top_[c] += w * std::fabs(vx[c] - vt[c]);
        col_mid_[c] += w * std::fabs(vx[c] - mid);
      }
    }
    for (std::int64_t c = 0; c < d; ++c) {
      const double mid = 0.5 * (cmin[c] + cmax[c]);
      col_top_[c] += sum_off * std::fabs(vt[c]);
      col_mid_[c] += sum_off * std::fabs(mid);
    }
  }
  for (std::int64_t c = 0; c < d; ++c) {
    double mag = col_mag_[c], err = col_err_[c];
    if (centred) err = std::min(err, std::min(col_top_[c], col_mid_[c]) * (1 + 0x1p-40));
    const double sum_abs = col_abs_[c], vmin = col_min_[c], vmax = col_max_[c];
    err += r.abs_weight * sum_abs + nd * fl / l_low;  // + products P v that underflow
    const double vabs = std::max(std::fabs(vmin), std::fabs(vmax));
    mag = std::min(mag + kFarWeight * sum_abs, vabs);
    const double before_div = err + 2.0001 * u * (mag + err);
    const double general = before_div + uh * (mag + before_div) + cs.k.dtype_abs;
    const double cap = (vmax - vmin) + (t + g_sum * (1 + t)) * vabs + uh * vabs * (1 + t + g_sum) + cs.k.dtype_abs;
    r.o_bound[c] = std::min(general, cap);
    r.o_mag[c] = mag;
  }
}

}  // namespace flashproof::bounds
