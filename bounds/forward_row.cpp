#include "bounds/forward_row.h"

#include <algorithm>
#include <cmath>

#include "bounds/bound_arithmetic.h"
#include "bounds/score_mod_terms.h"

namespace flashproof::bounds {

void ForwardRowBounds::compute(const CaseConstants& cs, const GroupInputs& g, Row& r, bool o_wanted) {
  const std::int64_t d = cs.d;
  const ArithmeticConstants& k = cs.k;
  const std::int64_t n = static_cast<std::int64_t>(r.keys.size());
  r.o_bound.assign(d, 0), r.o_mag.assign(d, 0);
  if (n == 0) {  // O = 0 and LSE = +inf exactly
    r.lse_bound = 0;
    return;
  }
  exact_.compute(cs, g.keys, r);
  const double u = k.u, fl = k.flush, kap = k.scale_rel;
  const double nd = static_cast<double>(n);

  // (F2) Errors of the computed logits. flash: x^ = fl(S^ * c^) in log2 units; naive:
  // s^ = fl(S^ * scale) in natural units. Absolute (LSE, backward) and relative to the row's
  // max (O: a common error cancels in the normalisation).
  std::vector<double>&arg_o = sized(arg_o_, n), &own = sized(own_, n);
  r.arg_lse.resize(n);
  double dm = 0;
  const double g_dot = gam_products(static_cast<double>(cs.dot_len), k, k.sum_eta);
  // (M2) A soft cap or a bias does not keep the scale's relative error kap common to the row's
  // logits: it joins each logit's own error, and the common terms below are 0.
  const bool mod = cs.p.score_mod();
  const double kap_common = mod ? 0 : kap;
  if (mod) r.raw_err.resize(n);
  for (std::int64_t x = 0; x < n; ++x) {
    if (k.flash) {
      const double dot = kLog2e * cs.sig * (1 + kap) * (g_dot * r.abs_dot[x] + cs.dot_len * fl);
      own[x] = dot + u * (kLog2e * (1 + kap) * r.raw_up[x] + dot) * (1 + u);
      if (mod) own[x] += kap * kLog2e * r.raw_up[x];
    } else {
      const double dot = cs.sig * (g_dot * r.abs_dot[x] + d * fl);
      own[x] = dot + u * (r.raw_up[x] + dot) * (1 + u);
    }
    if (mod) {
      r.raw_err[x] = own[x];
      own[x] = computed_modified_error(cs, own[x], r.raw_lo[x], r.raw_up[x], alibi_bias(cs, r.h, r.i, r.keys[x]),
                                       r.logit_abs[x]);
    }
    dm = std::max(dm, own[x]);
  }
  double max_rounded = 0;  // |M^| in log2 units (F7)
  for (std::int64_t x = 0; x < n; ++x) max_rounded = std::max(max_rounded, kLog2e * (1 + kap) * r.logit_abs[x] + own[x]);
  // (S1) Split-KV: each split's LSE_s = fl(fl(m_s ln2) + log l_s) (F7's roundings, |LSE_s| <= x_max
  // ln 2), fl(LSE_s log2e) (the product and fl(log2 e)), the shift fl(x_s - M) (|x_s - M| <= 2
  // x_max), an exp2, up to S rescale steps of the combine's running sum, the partial O_s rounded to
  // fp32, its product by the coefficient and the S-term fp32 sum: a log-error of every weight, as
  // though each split's coefficient were exact. Not shift-invariant: it grows with |LSE|.
  r.split_log = 0;
  if (cs.key_splits > 1) {
    const double splits = static_cast<double>(cs.key_splits), x_max = max_rounded + std::log2(nd) + 1;
    const double lse_s = (2 * u + u * u) * kLn2 * max_rounded + k.log_rel * (std::log(nd) + 1) + u * kLn2 * x_max;
    r.split_log = lse_s + kLn2 * (0x1p-24 + u) * x_max + kLn2 * u * 2 * x_max + cs.lam_exp +
                  splits * cs.lam_exp_chain + lam(gam(splits, u)) + 2 * cs.lam_u;
    r.split_log *= 1 + 0x1p-40;
  }
  // (F3) The shift x^_j - M^ and (flash) the rescale chain: each rounded relative to at most
  // R_j >= M^ - x^_j, twice for flash (the shift, and the chain's arguments summing to <= R_j).
  const double units = k.flash ? kLn2 : 1.0, shifts = k.flash ? 2 : 1;
  r.far.assign(n, false);
  double shift_arg = 0;  // the shift's roundings alone (F3), what arg_lse holds besides the logit's own error
  for (std::int64_t x = 0; x < n; ++x) {
    const double dist_units = k.flash ? kLog2e * (1 + kap_common) * r.dist[x] : r.dist[x];
    const double reach = dist_units + 2 * dm;
    const double common_o = kap_common * kLog2e * r.dist[x], common_lse = kap_common * kLog2e * r.logit_abs[x];
    arg_o[x] = units * (own[x] + common_o + shifts * u * reach);
    r.arg_lse[x] = units * (own[x] + common_lse + shifts * u * reach);
    // (F4) far: the computed exponent x^_j - M^ <= x^_j - x^_j* and the exact one are both below
    // -kFarLog2 (log2 units), so both weights are below 2^-kFarLog2 of the largest.
    const double exponent_up = k.flash ? -(1 - kap_common) * kLog2e * r.dist_lo[x] + 2 * dm + shifts * u * reach +
                                             kLog2e * r.split_log
                                       : kLog2e * (-r.dist_lo[x] + 2 * dm + u * reach);
    r.far[x] = -exponent_up - 1 >= kFarLog2 && kLog2e * r.dist_lo[x] >= kFarLog2;
    if (!r.far[x]) shift_arg = std::max(shift_arg, units * shifts * u * reach);
  }
  const double steps = static_cast<double>(cs.steps);
  const double weight_log = cs.lam_exp + steps * cs.lam_exp_chain + r.split_log;
  const double g_sum = gam_products(nd + steps, k, k.sum_eta);
  const double l_low = 1 - g_sum - steps * u * 1.01;  // the max weight is exp2(0) = 1 (F5)
  const double abs_one = (k.flash ? (steps + 1) * fl : 2 * fl);
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
  const double numer_round = cs.lam_uh + (k.flash ? 0 : cs.lam_u);  // P rounded (naive: divided first)
  // (F5') The denominator through the exact probabilities: L^/Z lies in [den_lo, den_up], each
  // weight's log-error weighted by its P rather than the largest one taken for all. The errors are
  // relative to any common shift, which cancels in the normalisation: the row's maximum (arg_o), or
  // the own logit error of the key that carries the row (`top`, the largest p_lo): then that key's
  // weight carries none of it and every other key both its own and the top's. Where one key carries
  // the row (a gap between the top logits), den_lo is then about 1 however large the logits'
  // rounding, where 1 - lambda is not even positive. rho is the least of the three forms.
  std::int64_t top = 0;
  for (std::int64_t x = 1; x < n; ++x)
    if (r.p_lo[x] > r.p_lo[top]) top = x;
  const double own_top = units * own[top];
  r.rho.assign(n, kInf);
  for (int relative_to_top = 0; relative_to_top < 2; ++relative_to_top) {
    const auto arg = [&](std::int64_t x) {
      if (!relative_to_top) return arg_o[x];
      return x == top ? std::max(0.0, arg_o[x] - own_top) : arg_o[x] + own_top;
    };
    double s_lo = 0, s_up = 0;
    for (std::int64_t x = 0; x < n; ++x)
      if (!r.far[x]) {
        const double th = arg(x) + weight_log;
        s_lo += r.p_lo[x] * exp_neg_small(th), s_up += r.p_up[x] * exp_small(th);
      }
    // The absolute terms are below zeta times the computed sum l^ (zeta's definition), so they
    // scale it by 1/(1 + zeta) to 1/(1 - zeta), relative to the top key's frame as to the maximum's.
    const double den_lo = s_lo * (1 - g_sum) * (1 - 0x1p-40) / (1 + zeta);
    const double den_up = zeta < 1 ? s_up * (1 + g_sum) * (1 + 0x1p-40) / (1 - zeta) : kInf;
    for (std::int64_t x = 0; x < n; ++x)
      if (!r.far[x]) {
        const double th = arg(x) + weight_log + numer_round;
        const double by_max = lambda < 1 ? exp_small(th) * (1 + g_sum) / (1 - lambda) - 1 : kInf;
        const double up = den_lo > 0 ? exp_small(th) * (1 + g_sum) / den_lo - 1 : kInf;
        const double down = 1 - exp_neg_small(th) * (1 - g_sum) / den_up;
        r.rho[x] = std::min(r.rho[x], relative_to_top ? std::max(up, down) * (1 + 0x1p-40)
                                                      : std::min(by_max, std::max(up, down) * (1 + 0x1p-40)));
      }
  }
  r.abs_weight = (k.dtype_abs + abs_one + kFarWeight) * (1 + zeta) / l_low;

  if (o_wanted || k.flash) output_.compute(cs, g.values, r, g_sum, zeta, l_low);

  // (F7) LSE = M^ ln 2 + log l^ (flash) or m + log l^ (naive).
  const double inner = lse_arg + weight_log + lam(g_sum) + lam(zeta);
  const double log_l = std::max(std::log(nd) + steps * cs.lam_u + lam(g_sum) + zeta, -std::log(l_low * (1 - zeta)));
  // fl(M^ * ln2f); a split-KV combine's M is the largest fl(LSE_s log2e), within x_max + split_log.
  const double m_final = r.split_log > 0 ? max_rounded + std::log2(nd) + 1 + kLog2e * r.split_log : max_rounded;
  const double scale_back = k.flash ? (2 * u + u * u) * kLn2 * m_final : 0;
  const double before_sum = inner + scale_back + k.log_rel * log_l;
  r.lse_bound = before_sum + u * (r.lse_abs + before_sum);
  // (B1') The same against the exact LSE of the computed logits: their own errors (own, and the
  // scale's common one) are left out, the shift's roundings kept. The final sum's rounding stays at
  // the computed LSE's full size, which lies within before_sum (not before_sum_computed) of |LSE|.
  const double before_sum_computed = shift_arg + weight_log + lam(g_sum) + lam(zeta) + scale_back + k.log_rel * log_l;
  r.lse_bound_computed = before_sum_computed + u * (r.lse_abs + before_sum);
}

}  // namespace flashproof::bounds
