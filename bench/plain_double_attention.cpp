#include "bench/plain_double_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "kernels/algo/mask.h"

namespace flashproof::bench {
namespace {

// Dense [b][h][s][d] copy of a [b, s, h, d] tensor, so that every row the loops read is contiguous.
struct Rows {
  std::int64_t heads, seqlen, dim;
  std::vector<double> data;
  Rows(const HostTensor& t, const Shape& expected, const char* name)
      : heads(expected[2]), seqlen(expected[1]), dim(expected[3]) {
    if (t.shape() != expected) throw std::invalid_argument(std::string(name) + ": wrong shape");
    data.resize(t.numel());
    // The same row reader as the reference's and the bounds' copies, so that the comparison is of
    // the attention arithmetic, not of two ways of reading a tensor.
    for (std::int64_t b = 0; b < expected[0]; ++b)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s < seqlen; ++s) t.read_row(b, s, h, data.data() + ((b * heads + h) * seqlen + s) * dim);
  }
  const double* row(std::int64_t b, std::int64_t h, std::int64_t s) const {
    return data.data() + ((b * heads + h) * seqlen + s) * dim;
  }
};

double dot(const double* a, const double* b, std::int64_t n) {
  double s = 0;
  for (std::int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

struct Attention {
  const Problem& p;
  Rows q, k, v;
  double scale;
  algo::WindowMask<std::int64_t> mask;

  Attention(const Problem& p_, const HostTensor& q_, const HostTensor& k_, const HostTensor& v_)
      : p(p_), q(q_, p.q_shape(), "Q"), k(k_, p.kv_shape(), "K"), v(v_, p.kv_shape(), "V"),
        scale(p.softmax_scale()), mask{p.mask_offset(), p.window_left, p.window_right} {}

  // One query row: P over the visible keys, O and LSE. Buffers are reused across rows.
  struct Row {
    std::vector<std::int64_t> keys;
    std::vector<double> prob, o;
    double lse = 0;
  };
  void forward_row(std::int64_t b, std::int64_t h, std::int64_t i, Row& r) const {
    const std::int64_t d = p.head_dim, hk = p.kv_head(h);
    const double* qi = q.row(b, h, i);
    r.keys.clear();
    r.prob.clear();
    for (std::int64_t j = 0; j < p.seqlen_k; ++j)
      if (mask.visible(i, j)) {
        r.keys.push_back(j);
        r.prob.push_back(scale * dot(qi, k.row(b, hk, j), d));
      }
    r.o.assign(d, 0.0);
    if (r.keys.empty()) {  // no visible key: O = 0, LSE = +inf (docs/spec.md, "Semantics")
      r.lse = std::numeric_limits<double>::infinity();
      return;
    }
    const double m = *std::max_element(r.prob.begin(), r.prob.end());
    double l = 0;
    for (double& x : r.prob) l += (x = std::exp(x - m));
    for (double& x : r.prob) x /= l;
    r.lse = m + std::log(l);
    // j outer, c inner: contiguous rows of V, as the reference's engine does.
    for (std::size_t t = 0; t < r.keys.size(); ++t) {
      const double* vj = v.row(b, hk, r.keys[t]);
      const double pt = r.prob[t];
      for (std::int64_t c = 0; c < d; ++c) r.o[c] += pt * vj[c];
    }
  }
};

}  // namespace

PlainForward plain_forward(const Problem& p, const HostTensor& q, const HostTensor& k,
                           const HostTensor& v) {
  const Attention a(p, q, k, v);
  const std::int64_t d = p.head_dim;
  PlainForward out;
  out.o.assign(p.batch * p.seqlen_q * p.heads_q * d, 0.0);
  out.lse.assign(p.batch * p.heads_q * p.seqlen_q, 0.0);
  Attention::Row r;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        a.forward_row(b, h, i, r);
        std::copy(r.o.begin(), r.o.end(), out.o.begin() + ((b * p.seqlen_q + i) * p.heads_q + h) * d);
        out.lse[(b * p.heads_q + h) * p.seqlen_q + i] = r.lse;
      }
  return out;
}

PlainBackward plain_backward(const Problem& p, const HostTensor& q, const HostTensor& k,
                             const HostTensor& v, const HostTensor& dout) {
  const Attention a(p, q, k, v);
  const Rows dO(dout, p.q_shape(), "dO");
  const std::int64_t d = p.head_dim;
  PlainBackward out;
  out.dq.assign(p.batch * p.seqlen_q * p.heads_q * d, 0.0);
  out.dk.assign(p.batch * p.seqlen_k * p.heads_kv * d, 0.0);
  out.dv.assign(out.dk.size(), 0.0);
  Attention::Row r;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        a.forward_row(b, h, i, r);  // recompute P (and O, for D)
        const std::int64_t hk = p.kv_head(h);
        const double* qi = a.q.row(b, h, i);
        const double* doi = dO.row(b, h, i);
        const double D = dot(doi, r.o.data(), d);
        double* dqi = out.dq.data() + ((b * p.seqlen_q + i) * p.heads_q + h) * d;
        for (std::size_t t = 0; t < r.keys.size(); ++t) {
          const std::int64_t j = r.keys[t];
          const double* kj = a.k.row(b, hk, j);
          const double ds = r.prob[t] * (dot(doi, a.v.row(b, hk, j), d) - D);  // P (dP - D)
          double* dkj = out.dk.data() + ((b * p.seqlen_k + j) * p.heads_kv + hk) * d;
          double* dvj = out.dv.data() + ((b * p.seqlen_k + j) * p.heads_kv + hk) * d;
          for (std::int64_t c = 0; c < d; ++c) {
            dqi[c] += ds * kj[c];
            dkj[c] += ds * qi[c];
            dvj[c] += r.prob[t] * doi[c];
          }
        }
        for (std::int64_t c = 0; c < d; ++c) dqi[c] *= a.scale;
      }
  for (double& x : out.dk) x *= a.scale;  // dK = scale * dS^T Q, scaled once at the end
  return out;
}

}  // namespace flashproof::bench
