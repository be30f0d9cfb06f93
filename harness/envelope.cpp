#include "harness/envelope.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "kernels/algo/mask.h"

namespace flashproof {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMargin = 1 + 0x1p-40;  // covers the double evaluation of the sums below

std::size_t numel(const Shape& s) { return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]); }

void size(Envelope& e, std::size_t n) { e.lo.assign(n, 0), e.hi.assign(n, 0); }

void set_symmetric(Envelope& e, std::size_t x, double bound) { e.lo[x] = -bound, e.hi[x] = bound; }

// One (batch, kv head): its query heads' rows, and the key columns they share.
class GroupEnvelopes {
 public:
  GroupEnvelopes(const Problem& p, const Inputs& in, bool backward, double slack, const OutputSample* sample,
                 Envelopes& out)
      : p_(p), in_(in), backward_(backward), s_(slack), sample_(sample), out_(out), d_(p.head_dim),
        scale_(static_cast<double>(p.softmax_scale())), tiny_(from_bits(p.dtype, 1)),
        mask_{p.mask_offset(), p.window_left, p.window_right} {}

  void run(std::int64_t b, std::int64_t hk) {
    const std::int64_t sk = p_.seqlen_k, d = d_;
    read_kv_rows(in_, b, hk, key_, val_);
    if (!group_finite(b, hk)) return unconstrained(b, hk);
    if (backward_) {
      dk_sum_.assign(sk * d, 0), dv_sum_.assign(sk * d, 0), seen_.assign(sk, 0);
      if (sample_) sampled_columns(b, hk);
    }
    for (std::int64_t h = hk * p_.group_size(); h < (hk + 1) * p_.group_size(); ++h)
      for (std::int64_t i = 0; i < p_.seqlen_q; ++i) row(b, h, i);
    if (backward_) columns(b, hk);
  }

 private:
  // NaN or inf inputs leave the exact result undefined: such a group's elements are not constrained.
  bool group_finite(std::int64_t b, std::int64_t hk) {
    auto finite = [](const std::vector<double>& v) {
      return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
    };
    if (!finite(key_) || !finite(val_)) return false;
    q_.resize(d_), dout_.resize(d_);
    for (std::int64_t h = hk * p_.group_size(); h < (hk + 1) * p_.group_size(); ++h)
      for (std::int64_t i = 0; i < p_.seqlen_q; ++i) {
        in_.q.read_row(b, i, h, q_.data());
        if (!finite(q_)) return false;
        if (!backward_) continue;
        in_.dout.read_row(b, i, h, dout_.data());
        if (!finite(dout_)) return false;
      }
    return true;
  }

  void unconstrained(std::int64_t b, std::int64_t hk) {
    auto open = [](Envelope& e, std::size_t x) { e.lo[x] = -kInf, e.hi[x] = kInf; };
    const std::int64_t d = d_;
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
  void sampled_columns(std::int64_t b, std::int64_t hk) {
    cols_.clear();
    for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
      if (sample_->col((b * p_.heads_kv + hk) * p_.seqlen_k + j)) cols_.push_back(j);
    vabs_all_.assign(d_, 0);
    for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
      for (std::int64_t c = 0; c < d_; ++c) vabs_all_[c] = std::max(vabs_all_[c], std::fabs(val_[j * d_ + c]));
  }

  void row(std::int64_t b, std::int64_t h, std::int64_t i) {
    const std::size_t lse_at = static_cast<std::size_t>((b * p_.heads_q + h) * p_.seqlen_q + i);
    double w = 0;
    if (!sample_ || sample_->row(static_cast<std::int64_t>(lse_at))) {
      if (!judged_row(b, h, i, lse_at, w)) return;  // sees no key
    } else {
      if (!backward_ || cols_.empty()) return;
      in_.q.read_row(b, i, h, q_.data());
      in_.dout.read_row(b, i, h, dout_.data());
      double hull = 0;  // H_i over every key of the group; G_i <= it
      for (std::int64_t c = 0; c < d_; ++c) hull += std::fabs(dout_[c]) * vabs_all_[c];
      w = (2 + s_) * hull * kMargin;
    }
    if (!backward_) return;
    auto add = [&](std::int64_t j) {
      seen_[j] = 1;
      double *dk = &dk_sum_[j * d_], *dv = &dv_sum_[j * d_];
      for (std::int64_t c = 0; c < d_; ++c) dk[c] += w * std::fabs(q_[c]), dv[c] += std::fabs(dout_[c]);
    };
    if (!sample_) {
      for (std::int64_t j : keys_) add(j);
    } else {
      for (std::int64_t j : cols_)
        if (mask_.visible(i, j)) add(j);
    }
  }

  // O, LSE and dQ of a judged row; w = W_i for its keys' columns. false when the row sees no key.
  bool judged_row(std::int64_t b, std::int64_t h, std::int64_t i, std::size_t lse_at, double& w) {
    const std::int64_t d = d_;
    keys_.clear();
    for (std::int64_t j = 0; j < p_.seqlen_k; ++j)
      if (mask_.visible(i, j)) keys_.push_back(j);
    const std::size_t o_at = static_cast<std::size_t>(((b * p_.seqlen_q + i) * p_.heads_q + h) * d);
    if (keys_.empty()) {  // O = 0, dQ = 0 (sized zeros already), LSE = +inf
      out_.lse.lo[lse_at] = out_.lse.hi[lse_at] = kInf;
      return false;
    }
    q_.resize(d), dout_.resize(d);
    in_.q.read_row(b, i, h, q_.data());
    vmin_.assign(d, kInf), vmax_.assign(d, -kInf), vabs_.assign(d, 0), kabs_.assign(d, 0);
    double m = -kInf, big = 0;
    for (std::int64_t j : keys_) {
      const double *k = &key_[j * d], *v = &val_[j * d];
      double dot = 0, abs_dot = 0;
      for (std::int64_t c = 0; c < d; ++c) {
        dot += q_[c] * k[c], abs_dot += std::fabs(q_[c] * k[c]);
        vmin_[c] = std::min(vmin_[c], v[c]), vmax_[c] = std::max(vmax_[c], v[c]);
        vabs_[c] = std::max(vabs_[c], std::fabs(v[c])), kabs_[c] = std::max(kabs_[c], std::fabs(k[c]));
      }
      m = std::max(m, scale_ * dot);
      big = std::max(big, std::fabs(scale_) * abs_dot);
    }
    for (std::int64_t c = 0; c < d; ++c) {
      const double widen = s_ * vabs_[c] * kMargin + tiny_;
      out_.o.lo[o_at + c] = vmin_[c] - widen, out_.o.hi[o_at + c] = vmax_[c] + widen;
    }
    const double log_n = std::log(static_cast<double>(keys_.size()));
    const double widen = s_ * (big + log_n + 1) * kMargin;
    out_.lse.lo[lse_at] = m - widen, out_.lse.hi[lse_at] = m + log_n + widen;
    if (!backward_) return true;

    in_.dout.read_row(b, i, h, dout_.data());
    double g = 0, hull = 0;  // G_i and H_i
    for (std::int64_t c = 0; c < d; ++c) hull += std::fabs(dout_[c]) * vabs_[c];
    for (std::int64_t j : keys_) {
      const double* v = &val_[j * d];
      double dp = 0;
      for (std::int64_t c = 0; c < d; ++c) dp += std::fabs(dout_[c] * v[c]);
      g = std::max(g, dp);
    }
    w = (g + (1 + s_) * hull) * kMargin;
    const double grow = (1 + s_) * kMargin;
    for (std::int64_t c = 0; c < d; ++c)
      set_symmetric(out_.dq, o_at + c, grow * std::fabs(scale_) * w * kabs_[c] + tiny_);
    return true;
  }

  void columns(std::int64_t b, std::int64_t hk) {
    const std::int64_t d = d_, grow_rows = p_.seqlen_q * p_.group_size();
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

  const Problem& p_;
  const Inputs& in_;
  bool backward_;
  double s_;
  const OutputSample* sample_;
  Envelopes& out_;
  std::int64_t d_;
  double scale_, tiny_;
  algo::WindowMask<std::int64_t> mask_;
  std::vector<std::int64_t> keys_, cols_;
  std::vector<double> key_, val_, q_, dout_, vmin_, vmax_, vabs_, vabs_all_, kabs_, dk_sum_, dv_sum_;
  std::vector<std::uint8_t> seen_;
};

}  // namespace

const char* envelope_rule(const std::string& tensor) {
  if (tensor == "O") return "O in the hull of the visible V rows";
  if (tensor == "LSE") return "LSE between the largest logit and it plus log n";
  if (tensor == "dQ") return "|dQ| within what sum_j P_ij = 1 allows";
  if (tensor == "dK") return "|dK| within what P <= 1 and sum_j P_ij = 1 allow";
  if (tensor == "dV") return "|dV| within what P <= 1 allows";
  return "the bound-free envelope";
}

Envelopes bound_free_envelopes(const Problem& p, const Inputs& in, bool backward, double slack,
                               const OutputSample* sample, int threads) {
  Envelopes out;
  size(out.o, numel(p.q_shape()));
  size(out.lse, numel(p.lse_shape()));
  if (backward) {
    size(out.dq, numel(p.q_shape()));
    size(out.dk, numel(p.kv_shape()));
    size(out.dv, numel(p.kv_shape()));
  }
  parallel_for(
      p.batch * p.heads_kv,
      [&](std::int64_t item) {
        GroupEnvelopes group(p, in, backward, slack, sample, out);
        group.run(item / p.heads_kv, item % p.heads_kv);
      },
      threads);
  return out;
}

}  // namespace flashproof
