#include "bounds/score_mod_terms.h"

#include <algorithm>
#include <cmath>

#include "bounds/bound_arithmetic.h"

namespace flashproof::bounds {
namespace {

double sech2(double z) {  // 1 / cosh^2 z; 0 once cosh overflows
  const double c = std::cosh(z);
  return 1 / (c * c);
}

// The relative errors of the fp32 steps (algo/score_mod.h), taken for both models (the naive one
// has an exact cap and slope, so these are its upper bounds): the cap C^ = fl(c fl(log2 e)), its
// inverse I^ = fl(1 / C^), a slope fl(slope fl(log2 e)), tanhf (2 ulps: CUDA's and glibc's
// documented maximum), and the flush of a result below 2^-126.
struct ModRoundings {
  double u, eps_c, eps_i, eps_t = 0x1p-22, eps_slope, flush = 0x1p-126;
  explicit ModRoundings(double unit) : u(unit) {
    eps_c = (1 + u) * (1 + u) - 1;
    eps_i = (1 + u) * (1 + eps_c / (1 - eps_c)) - 1;
    eps_slope = (1 + u) * (1 + u) - 1;
  }
  double theta() const { return (1 + eps_i) * (1 + u) - 1; }  // a^ = fl(x^ I^) = (x^ / C)(1 + theta)
};

}  // namespace

double alibi_bias(const CaseConstants& cs, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (!cs.p.alibi()) return 0;
  return -static_cast<double>(cs.p.alibi_slopes[static_cast<std::size_t>(h)]) *
         static_cast<double>(cs.keys.alibi_distance(i, j));
}

void exact_modified_logit(const CaseConstants& cs, double s, double e_s, double bias, double& y, double& e_y) {
  y = s, e_y = e_s;
  if (cs.p.softcap) {
    // 1-Lipschitz with slope sech^2 at the nearest point of the interval; s / c, std::tanh (within
    // 4 ulps, taken as 2^-50) and the product by c: 2^-49 |y| together, and an absolute 2^-1000.
    const double c = *cs.p.softcap;
    y = c * std::tanh(s / c);
    e_y = e_s * sech2(std::max(0.0, std::fabs(s) - e_s) / c) + 0x1p-49 * std::fabs(y) + 0x1p-1000;
  }
  if (bias != 0) {  // the bias rounds once (a 24-bit slope times a distance of up to 35 bits)
    y += bias;
    e_y += 0x1p-53 * std::fabs(bias) + 0x1p-53 * std::fabs(y);
  }
  e_y *= 1 + 0x1p-50;
}

double computed_modified_error(const CaseConstants& cs, double e_x, double s_lo, double s_up, double bias,
                               double y_up) {
  const ModRoundings m(cs.k.u);
  const double L = cs.k.flash ? kLog2e : 1.0, u = m.u;
  double e = e_x;
  if (cs.p.softcap) {
    // (M2) f(x) = C tanh(x / C), C = L c: |f(x^) - f(x*)| <= e_x sech^2 at the interval's nearest
    // point; then the roundings of a^ (relative theta, which tanh's argument passes on at most:
    // tanh(z (1 + t)) / tanh(z) lies between 1 and 1 + t), of tanhf and of the product by C^,
    // relative to |f(x^)| <= min(C, |x^|); a flushed argument or result costs C 2^-126 + 2^-126.
    const double c = *cs.p.softcap, big_c = L * c;
    const double lip = sech2(std::max(0.0, s_lo - e_x / L) / c);
    const double f_up = std::min(big_c, L * s_up + e_x);
    const double rho = (1 + m.theta()) * (1 + m.eps_t) * (1 + m.eps_c) * (1 + u) - 1;
    e = e_x * lip + f_up * rho + big_c * (1 + m.eps_c) * (1 + u) * m.flush + m.flush;
    // Both values lie within C (the computed one within C^ |t^| rounded): never more than 2C apart.
    e = std::min(e, big_c * (2 + m.eps_c + m.eps_t + 2 * u) * (1 + 4 * u) + m.flush);
  }
  if (cs.p.alibi()) {
    // The bias fl(fl(slope L) float(distance)): the slope's, the distance's and the product's
    // roundings, and a flushed product; then the sum with the capped logit, rounded once.
    const double b_up = L * std::fabs(bias);
    const double e_b = b_up * ((1 + m.eps_slope) * (1 + u) * (1 + u) - 1) + m.flush;
    e = e + e_b + u * (1 + u) * (L * y_up + e + e_b);
  }
  return e * (1 + 0x1p-50);
}

CapDerivative cap_derivative(const CaseConstants& cs, double e_x, double s_lo, double s_up) {
  const ModRoundings m(cs.k.u);
  const double L = cs.k.flash ? kLog2e : 1.0, u = m.u, c = *cs.p.softcap, big_c = L * c;
  const double a_lo = s_lo / c * (1 - 0x1p-52), a_up = s_up / c * (1 + 0x1p-52);
  // |a^ - a|, a = s* / c: the computed product's error and the argument's rounding.
  const double da = e_x / big_c * (1 + m.theta()) + a_up * m.theta();
  // |t^ - tanh a|: tanh's slope over the interval, tanhf's error, a flushed result.
  const double t_up = std::min(1.0, std::tanh(a_up + da) * (1 + 0x1p-50));
  const double dt = da * sech2(std::max(0.0, a_lo - da)) + t_up * m.eps_t + m.flush;
  const double big_t = t_up * (1 + m.eps_t) + m.flush;  // |t^|
  const double th_up = std::min(1.0, std::tanh(a_up) * (1 + 0x1p-50));
  CapDerivative g;
  g.g_up = std::min(1.0, sech2(a_lo) * (1 + 0x1p-50));
  // fl(t^ t^) within u of t^2 (and a flush), then 1 - it rounded once.
  const double e1 = dt * (2 * th_up + dt) + u * big_t * big_t + m.flush;
  g.g_err = (e1 + u * (g.g_up + e1)) * (1 + 0x1p-50);
  return g;
}

}  // namespace flashproof::bounds
