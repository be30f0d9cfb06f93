#include "bounds/group_envelopes.h"

#include <algorithm>
#include <cmath>

#include "bounds/bound_arithmetic.h"

namespace flashproof::bounds {

namespace {

constexpr double kMargin = 1 + 0x1p-40;  // covers the double evaluation of the sums below

void set_symmetric(Envelope& e, std::size_t x, double bound) { e.lo[x] = -bound, e.hi[x] = bound; }

// sum_c a_c b_c and sum_c |a_c b_c| in plain order, for four rows of b at once: four independent
// chains, each summed exactly as one loop over c would (the envelopes' arithmetic, bit for bit).
void dots4(const double* a, const double* const b[4], std::int64_t d, double dot[4], double abs_dot[4]) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  for (std::int64_t c = 0; c < d; ++c) {
    const double p0 = a[c] * b[0][c], p1 = a[c] * b[1][c], p2 = a[c] * b[2][c], p3 = a[c] * b[3][c];
    s0 += p0, s1 += p1, s2 += p2, s3 += p3;
    t0 += std::fabs(p0), t1 += std::fabs(p1), t2 += std::fabs(p2), t3 += std::fabs(p3);
  }
  dot[0] = s0, dot[1] = s1, dot[2] = s2, dot[3] = s3;
  abs_dot[0] = t0, abs_dot[1] = t1, abs_dot[2] = t2, abs_dot[3] = t3;
}

// The same for one row of b.
void dot1(const double* a, const double* b, std::int64_t d, double& dot, double& abs_dot) {
  dot = 0, abs_dot = 0;
  for (std::int64_t c = 0; c < d; ++c) dot += a[c] * b[c], abs_dot += std::fabs(a[c] * b[c]);
}

// f(x, dot_x, abs_dot_x) for every listed row x of `rows` (row j at j * d) against a, in order.
template <class F>
void each_dot(const double* a, const std::vector<double>& rows, const std::vector<std::int64_t>& keys, std::int64_t d,
              F f) {
  const std::size_t n = keys.size();
  std::size_t x = 0;
  for (; x + 4 <= n; x += 4) {
    const double* b[4] = {&rows[keys[x] * d], &rows[keys[x + 1] * d], &rows[keys[x + 2] * d], &rows[keys[x + 3] * d]};
    double dot[4], abs_dot[4];
    dots4(a, b, d, dot, abs_dot);
    for (std::size_t y = 0; y < 4; ++y) f(dot[y], abs_dot[y]);
  }
  for (; x < n; ++x) {
    double dot, abs_dot;
    dot1(a, &rows[keys[x] * d], d, dot, abs_dot);
    f(dot, abs_dot);
  }
}

}  // namespace

GroupEnvelopes::GroupEnvelopes(const Problem& p, const Inputs& in, bool backward, double slack,
                               const OutputSample* sample, Envelopes& out)
    : p_(p), in_(in), backward_(backward), s_(slack), sample_(sample), out_(out), d_(p.head_dim),
      scale_(static_cast<double>(p.softmax_scale())), tiny_(from_bits(p.dtype, 1)),
      keys_(p) {}

bool GroupEnvelopes::start(std::int64_t b, std::int64_t hk, const std::vector<double>& keys,
                           const std::vector<double>& values) {
  b_ = b, hk_ = hk, key_ = &keys, val_ = &values;
  if (!group_finite()) {
    unconstrained();
    return false;
  }
  if (backward_) {
    const std::int64_t sk = p_.seqlen_k;
    dk_sum_.assign(sk * d_, 0), dv_sum_.assign(sk * d_, 0), seen_.assign(sk, 0);
    cols_.clear();
    if (sample_) sampled_columns();
  }
  return true;
}

// NaN or inf inputs leave the exact result undefined: such a group's elements are not constrained.
bool GroupEnvelopes::group_finite() {
  auto finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!finite(*key_) || !finite(*val_)) return false;
  q_.resize(d_), dout_.resize(d_);
  for (std::int64_t h = hk_ * p_.group_size(); h < (hk_ + 1) * p_.group_size(); ++h)
    for (std::int64_t i = 0; i < p_.seqlen_q; ++i) {
      in_.q.read_row(b_, i, h, q_.data());
      if (!finite(q_)) return false;
      if (!backward_) continue;
      in_.dout.read_row(b_, i, h, dout_.data());
      if (!finite(dout_)) return false;
    }
  return true;
}

void GroupEnvelopes::unconstrained() {
  auto open = [](Envelope& e, std::size_t x) { e.lo[x] = -kInf, e.hi[x] = kInf; };
  const std::int64_t d = d_, b = b_, hk = hk_;
  for (std::int64_t h = hk * p_.group_size(); h < (hk + 1) * p_.group_size(); ++h)
    for (std::int64_t i = 0; i < p_.seqlen_q; ++i) {
      open(out_.lse, static_cast<std::size_t>((b * p_.heads_q + h) * p_.seqlen_q + i));
      for (std::int64_t c = 0; c < d; ++c) {
        const std::size_t at = static_cast<std::size_t>(((b * p_.seqlen_q + i) * p_.heads_q + h) * d + c);
        open(out_.o, at);
        if (backward_) open(out_.dq, at);
      }
    }
  if (!backward_) return;
  for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
    for (std::int64_t c = 0; c < d; ++c) {
      const std::size_t at = static_cast<std::size_t>(((b * p_.seqlen_k + j) * p_.heads_kv + hk) * d + c);
      open(out_.dk, at), open(out_.dv, at);
    }
}

// A sampled check's key columns (dK, dV), and the largest |v_c| over all of the group's keys: the
// rows it does not judge still add to those columns, with a W_i from that maximum (a superset of
// the visible keys, so an upper bound) instead of their own O(seqlen_k d) scan.
void GroupEnvelopes::sampled_columns() {
  for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
    if (sample_->col((b_ * p_.heads_kv + hk_) * p_.seqlen_k + j)) cols_.push_back(j);
  const std::vector<double>& val = *val_;
  vabs_all_.assign(d_, 0);
  for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
    for (std::int64_t c = 0; c < d_; ++c) vabs_all_[c] = std::max(vabs_all_[c], std::fabs(val[j * d_ + c]));
}

// Row i's W_i into the dK and dV sums of its keys: those it sees (keys, without a sample) or the
// sample's columns it sees.
void GroupEnvelopes::add_to_columns(std::int64_t i, double w, const std::vector<std::int64_t>* keys,
                                    const std::vector<double>& q, const std::vector<double>& dout) {
  auto add = [&](std::int64_t j) {
    seen_[j] = 1;
    double *dk = &dk_sum_[j * d_], *dv = &dv_sum_[j * d_];
    for (std::int64_t c = 0; c < d_; ++c) dk[c] += w * std::fabs(q[c]), dv[c] += std::fabs(dout[c]);
  };
  if (!sample_) {
    for (std::int64_t j : *keys) add(j);
  } else {
    const algo::KeyRange<std::int64_t> seen = keys_.of_row(i);
    for (std::int64_t j : cols_)
      if (seen.contains(j)) add(j);
  }
}

void GroupEnvelopes::other_row(std::int64_t i, const std::vector<double>& q, const std::vector<double>& dout) {
  double hull = 0;  // H_i over every key of the group; G_i <= it
  for (std::int64_t c = 0; c < d_; ++c) hull += std::fabs(dout[c]) * vabs_all_[c];
  add_to_columns(i, (2 + s_) * hull * kMargin, nullptr, q, dout);
}

// O, LSE and dQ of a judged row, and W_i for its keys' columns.
void GroupEnvelopes::judged_row(std::int64_t h, std::int64_t i, const std::vector<std::int64_t>& keys,
                                const std::vector<double>& q, const std::vector<double>& dout) {
  const std::int64_t d = d_, b = b_;
  const std::size_t lse_at = static_cast<std::size_t>((b * p_.heads_q + h) * p_.seqlen_q + i);
  const std::size_t o_at = static_cast<std::size_t>(((b * p_.seqlen_q + i) * p_.heads_q + h) * d);
  if (keys.empty()) {  // O = 0, dQ = 0 (sized zeros already), LSE = +inf
    out_.lse.lo[lse_at] = out_.lse.hi[lse_at] = kInf;
    return;
  }
  const std::vector<double>&key = *key_, &val = *val_;
  vmin_.assign(d, kInf), vmax_.assign(d, -kInf), vabs_.assign(d, 0), kabs_.assign(d, 0);
  // Per column, over the keys in order; four keys per pass over the columns (the same operations
  // in the same order, with a quarter of the loads and stores of the running values).
  double *__restrict vmin = vmin_.data(), *__restrict vmax = vmax_.data(), *__restrict vabs = vabs_.data(),
                     *__restrict kabs = kabs_.data();
  std::size_t x = 0;
  for (; x + 4 <= keys.size(); x += 4) {
    const double *k0 = &key[keys[x] * d], *k1 = &key[keys[x + 1] * d], *k2 = &key[keys[x + 2] * d],
                 *k3 = &key[keys[x + 3] * d];
    const double *v0 = &val[keys[x] * d], *v1 = &val[keys[x + 1] * d], *v2 = &val[keys[x + 2] * d],
                 *v3 = &val[keys[x + 3] * d];
    for (std::int64_t c = 0; c < d; ++c) {
      vmin[c] = std::min(std::min(std::min(std::min(vmin[c], v0[c]), v1[c]), v2[c]), v3[c]);
      vmax[c] = std::max(std::max(std::max(std::max(vmax[c], v0[c]), v1[c]), v2[c]), v3[c]);
      vabs[c] = std::max(std::max(std::max(std::max(vabs[c], std::fabs(v0[c])), std::fabs(v1[c])), std::fabs(v2[c])),
                         std::fabs(v3[c]));
      kabs[c] = std::max(std::max(std::max(std::max(kabs[c], std::fabs(k0[c])), std::fabs(k1[c])), std::fabs(k2[c])),
                         std::fabs(k3[c]));
    }
  }
  for (; x < keys.size(); ++x) {
    const double *k = &key[keys[x] * d], *v = &val[keys[x] * d];
    for (std::int64_t c = 0; c < d; ++c) {
      vmin[c] = std::min(vmin[c], v[c]), vmax[c] = std::max(vmax[c], v[c]);
      vabs[c] = std::max(vabs[c], std::fabs(v[c])), kabs[c] = std::max(kabs[c], std::fabs(k[c]));
    }
  }
  double m = -kInf, big = 0;
  std::size_t at = 0;  // each_dot visits the keys in order
  each_dot(q.data(), key, keys, d, [&](double dot, double abs_dot) {
    double y = scale_ * dot, mag = std::fabs(scale_) * abs_dot;
    // The soft cap and ALiBi (algo/score_mod.h). An fp32 product's error, which the slack covers
    // as a share of |scale q.k|, passes the cap at most 1:1 and never beyond 2c (two capped values
    // differ by less): the capped part counts with min(|scale q.k|, 2c / slack). The bias counts
    // with its size.
    if (p_.softcap) {
      const double c = *p_.softcap;
      y = c * std::tanh(y / c), mag = std::min(mag, 2 * c / s_);
    }
    if (p_.alibi()) {
      const double bias = -static_cast<double>(p_.alibi_slopes[static_cast<std::size_t>(h)]) *
                          static_cast<double>(keys_.alibi_distance(i, keys[at]));
      y += bias, mag += std::fabs(bias);
    }
    ++at;
    m = std::max(m, y);
    big = std::max(big, mag);
  });
  for (std::int64_t c = 0; c < d; ++c) {
    const double widen = s_ * vabs_[c] * kMargin + tiny_;
    out_.o.lo[o_at + c] = vmin_[c] - widen, out_.o.hi[o_at + c] = vmax_[c] + widen;
  }
  const double log_n = std::log(static_cast<double>(keys.size()));
  const double widen = s_ * (big + log_n + 1) * kMargin;
  out_.lse.lo[lse_at] = m - widen, out_.lse.hi[lse_at] = m + log_n + widen;
  if (!backward_) return;

  double g = 0, hull = 0;  // G_i and H_i
  for (std::int64_t c = 0; c < d; ++c) hull += std::fabs(dout[c]) * vabs_[c];
  each_dot(dout.data(), val, keys, d, [&](double, double dp) { g = std::max(g, dp); });
  const double w = (g + (1 + s_) * hull) * kMargin;
  const double grow = (1 + s_) * kMargin;
  for (std::int64_t c = 0; c < d; ++c)
    set_symmetric(out_.dq, o_at + c, grow * std::fabs(scale_) * w * kabs_[c] + tiny_);
  add_to_columns(i, w, &keys, q, dout);
}

void GroupEnvelopes::finish() {
  if (!backward_) return;
  const std::int64_t d = d_, b = b_, hk = hk_, grow_rows = p_.seqlen_q * p_.group_size();
  // Every term of the sums is non-negative; their double rounding is within n 2^-53 relative.
  const double grow = (1 + s_) * kMargin * (1 + static_cast<double>(grow_rows) * 0x1p-52);
  for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
    for (std::int64_t c = 0; c < d; ++c) {
      const std::size_t at = static_cast<std::size_t>(((b * p_.seqlen_k + j) * p_.heads_kv + hk) * d + c);
      if (!seen_[j]) continue;  // dK = dV = 0 exactly (sized zeros)
      set_symmetric(out_.dk, at, grow * std::fabs(scale_) * dk_sum_[j * d + c] + tiny_);
      set_symmetric(out_.dv, at, grow * dv_sum_[j * d + c] + tiny_);
    }
}

}  // namespace flashproof::bounds
