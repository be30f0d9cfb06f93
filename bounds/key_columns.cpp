#include "bounds/key_columns.h"

#include <cmath>

#include "bounds/bound_arithmetic.h"

namespace flashproof::bounds {

void KeyColumnBounds::start(const CaseConstants& cs, std::int64_t b, std::int64_t hk, const OutputSample* wanted,
                            bool with_d_error) {
  const std::int64_t sk = cs.p.seqlen_k, d = cs.d;
  with_d_error_ = with_d_error;
  wanted_keys_.clear();
  key_wanted_.assign(sk, 0);
  for (std::int64_t j = 0; j < sk; ++j)
    if (!wanted || wanted->col((b * cs.p.heads_kv + hk) * sk + j)) wanted_keys_.push_back(j), key_wanted_[j] = 1;
  for (auto* acc : {&acc_sq_, &acc_dsq_, &acc_pdo_, &acc_phdo_}) acc->assign(sk * d, 0);
  if (with_d_error) acc_pdq_.assign(sk * d, 0);
  rows_seeing_.assign(sk, 0);
  column_conditional_.assign(sk, 0);
}

// sq, dsq: sum_i sigma_ij |q_ic| and sum_i |dS_ij| |q_ic| (dK); pdo, phdo: sum_i |P^_ij - P_ij| |dO_ic|
// and sum_i P^_ij |dO_ic| (dV).
void KeyColumnBounds::add_row(const CaseConstants& cs, const Row& r, const RowGradientTerms& t) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  if (t.overflow_possible)
    for (std::int64_t j : r.keys) column_conditional_[j] = 1;
  for (std::int64_t x = 0; x < n; ++x) {
    const std::int64_t j = r.keys[x];
    if (!key_wanted_[j]) continue;
    ++rows_seeing_[j];
    const double sx = t.sigma[x], ux = t.ds_up[x], ex = t.ph_err[x], hx = t.ph_hat[x];
    const double *__restrict q = r.q.data(), *__restrict dout = r.dout.data();
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

void KeyColumnBounds::add_d_error(const CaseConstants& cs, const Row& r, double e) {
  const std::int64_t d = cs.d, n = static_cast<std::int64_t>(r.keys.size());
  const double* __restrict q = r.q.data();
  for (std::int64_t x = 0; x < n; ++x) {
    const std::int64_t j = r.keys[x];
    if (!key_wanted_[j]) continue;
    double* __restrict pq = acc_pdq_.data() + j * d;
    const double pe = r.p_up[x] * e;
    for (std::int64_t c = 0; c < d; ++c) pq[c] += pe * std::fabs(q[c]);
  }
}

void KeyColumnBounds::finish(const CaseConstants& cs, std::int64_t b, std::int64_t hk,
                             ImplementationBounds& out) const {
  const std::int64_t d = cs.d, g = cs.p.group_size();
  const ArithmeticConstants& k = cs.k;
  for (std::int64_t j : wanted_keys_) {
    const double rows = static_cast<double>(rows_seeing_[j]);
    const double g_k = k.flash ? gam_products(rows + g * ceil_div(cs.p.max_seqlen_q(), 16) + 2, k, k.sum_eta)
                               : gam_products(rows, k, k.u);
    const double underflow = rows * k.flush;  // products dS q and P dO below 2^-126
    for (std::int64_t c = 0; c < d; ++c) {
      const std::size_t at = cs.kv_index(b, j, hk, c), a = static_cast<std::size_t>(j * d + c);
      if (rows == 0) {  // no row sees the key: dK = dV = 0 exactly
        out.dk[at] = out.dv[at] = 0;
        continue;
      }
      out.dk[at] = cs.per_head(cs.scaled_sum_bound(acc_sq_[a] + underflow, acc_dsq_[a], g_k), cs.sig * acc_dsq_[a]);
      out.dk_conditional[at] = column_conditional_[j];
      if (with_d_error_) out.dk_from_d_error[at] = cs.sig * acc_pdq_[a];
      const double e = acc_pdo_[a] + g_k * acc_phdo_[a] + underflow;
      out.dv[at] = cs.per_head(e + k.dtype_u * (acc_phdo_[a] + e) + k.dtype_abs, acc_phdo_[a]);
    }
  }
}

}  // namespace flashproof::bounds
