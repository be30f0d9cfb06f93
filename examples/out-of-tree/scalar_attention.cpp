#include "scalar_attention.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using flashproof::HostTensor;
using flashproof::Problem;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Bottom-right aligned window: row i sees key j iff i + offset - left <= j <= i + offset + right,
// a negative side unbounded. Distances, not sums: a side may be as large as int64 allows.
bool visible(const Problem& p, std::int64_t i, std::int64_t j) {
  const std::int64_t diag = i + p.seqlen_k - p.seqlen_q;
  return (p.window_right < 0 || j - diag <= p.window_right) && (p.window_left < 0 || diag - j <= p.window_left);
}

float dot(const HostTensor& x, const HostTensor& y, std::int64_t b, std::int64_t i, std::int64_t hx, std::int64_t j,
          std::int64_t hy, std::int64_t dim) {
  float acc = 0.f;
  for (std::int64_t c = 0; c < dim; ++c) acc += static_cast<float>(x.get(b, i, hx, c)) * static_cast<float>(y.get(b, j, hy, c));
  return acc;
}

float in_dtype(const Problem& p, float x) { return static_cast<float>(flashproof::round_to(p.dtype, x)); }

// Row i of head h: P (normalised, rounded to the dtype, 0 where masked) and the LSE; +inf when the
// row sees no key.
float softmax_row(const Problem& p, const HostTensor& q, const HostTensor& k, std::int64_t b, std::int64_t h,
                  std::int64_t i, std::vector<float>& prob) {
  const std::int64_t hk = p.kv_head(h);
  const float scale = p.softmax_scale();
  prob.assign(p.seqlen_k, 0.f);
  float m = -kInf;
  for (std::int64_t j = 0; j < p.seqlen_k; ++j)
    if (visible(p, i, j)) {
      prob[j] = dot(q, k, b, i, h, j, hk, p.head_dim) * scale;
      m = std::max(m, prob[j]);
    }
  if (m == -kInf) return kInf;
  float l = 0.f;
  for (std::int64_t j = 0; j < p.seqlen_k; ++j)
    if (visible(p, i, j)) l += prob[j] = std::exp(prob[j] - m);
  for (float& x : prob) x = in_dtype(p, x / l);
  return m + std::log(l);
}

}  // namespace

void ScalarAttention::forward(const Problem& p, const flashproof::ForwardArgs& a) {
  std::vector<float> prob;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        a.lse.set(b, h, i, 0, softmax_row(p, a.q, a.k, b, h, i, prob));
        for (std::int64_t c = 0; c < p.head_dim; ++c) {
          float acc = 0.f;
          for (std::int64_t j = 0; j < p.seqlen_k; ++j)  // masked keys skipped, never multiplied by 0
            if (visible(p, i, j)) acc += prob[j] * static_cast<float>(a.v.get(b, j, p.kv_head(h), c));
          a.o.set(b, i, h, c, acc);
        }
      }
}

void ScalarAttention::backward(const Problem& p, const flashproof::BackwardArgs& a) {
  const float scale = p.softmax_scale();
  const std::int64_t sk = p.seqlen_k, d = p.head_dim;
  std::vector<float> prob, ds(sk);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t hk = 0; hk < p.heads_kv; ++hk) {
      // dK and dV of this kv head: one fp32 sum over its group of query heads, rounded once.
      std::vector<float> dk(sk * d, 0.f), dv(sk * d, 0.f);
      for (std::int64_t h = hk * p.group_size(); h < (hk + 1) * p.group_size(); ++h)
        for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
          softmax_row(p, a.q, a.k, b, h, i, prob);
          float sum = 0.f;  // D_i = sum_j P_ij dP_ij
          for (std::int64_t j = 0; j < sk; ++j) {
            ds[j] = visible(p, i, j) ? in_dtype(p, dot(a.dout, a.v, b, i, h, j, hk, d)) : 0.f;
            sum += prob[j] * ds[j];
          }
          for (std::int64_t j = 0; j < sk; ++j) ds[j] = visible(p, i, j) ? in_dtype(p, prob[j] * (ds[j] - sum)) : 0.f;
          for (std::int64_t c = 0; c < d; ++c) {
            float dq = 0.f;
            for (std::int64_t j = 0; j < sk; ++j)
              if (visible(p, i, j)) dq += ds[j] * static_cast<float>(a.k.get(b, j, hk, c));
            a.dq.set(b, i, h, c, dq * scale);
          }
          for (std::int64_t j = 0; j < sk; ++j)
            if (visible(p, i, j))
              for (std::int64_t c = 0; c < d; ++c) {
                dk[j * d + c] += ds[j] * static_cast<float>(a.q.get(b, i, h, c));
                dv[j * d + c] += prob[j] * static_cast<float>(a.dout.get(b, i, h, c));
              }
        }
      for (std::int64_t j = 0; j < sk; ++j)
        for (std::int64_t c = 0; c < d; ++c) {
          a.dk.set(b, j, hk, c, dk[j * d + c] * scale);
          a.dv.set(b, j, hk, c, dv[j * d + c]);
        }
    }
}
