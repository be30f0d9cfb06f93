#include "bounds/exact_softmax.h"

#include <algorithm>
#include <cmath>

#include "bounds/bound_arithmetic.h"
#include "bounds/score_mod_terms.h"

namespace flashproof::bounds {

void ExactSoftmax::compute(const CaseConstants& cs, const std::vector<double>& key_rows, Row& r) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  const double g53 = gam(static_cast<double>(d), 0x1p-53), scale = cs.p.softmax_scale();
  std::vector<double>&sd = sized(sd_, n), &err = sized(err_, n);
  r.abs_dot.resize(n), r.raw_lo.resize(n), r.raw_up.resize(n);
  for (std::int64_t x = 0; x < n; ++x) {
    double dot, abs_dot;
    dot_and_abs(r.q.data(), &key_rows[r.keys[x] * d], d, dot, abs_dot);
    r.abs_dot[x] = abs_dot * (1 + 2 * g53);
    sd[x] = scale * dot;
    err[x] = cs.sig * g53 * r.abs_dot[x] * (1 + 0x1p-50) + 0x1p-52 * std::fabs(sd[x]);
    r.raw_lo[x] = std::max(0.0, std::fabs(sd[x]) - err[x]), r.raw_up[x] = std::fabs(sd[x]) + err[x];
    // (M1) the soft cap and the ALiBi bias on the exact logit.
    if (cs.p.score_mod())
      exact_modified_logit(cs, sd[x], err[x], alibi_bias(cs, r.h, r.i, r.keys[x]), sd[x], err[x]);
  }
  const double smax = *std::max_element(sd.begin(), sd.end());
  const double emax = *std::max_element(err.begin(), err.end());
  r.logit_abs.resize(n), r.dist.resize(n), r.dist_lo.resize(n), r.gap.resize(n), r.gap_lo.resize(n);
  r.p_up.resize(n), r.p_lo.resize(n), r.p_mid.resize(n);
  std::vector<double>&e = sized(e_, n), &delta = sized(delta_, n);
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

}  // namespace flashproof::bounds
