// Exact double copies of Q, K, V, dO in head-major order [b][h][s][d], so the reference's inner
// loops run over contiguous rows whatever the caller's strides were. Also the Euclidean norm of
// every row, rounded up, for the a-priori dot-product error bounds (Cauchy-Schwarz).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof::reference {

struct DenseRows {
  std::int64_t batch = 0, heads = 0, seqlen = 0, dim = 0;
  std::vector<double> data;  // [b][h][s][d]
  std::vector<double> norm;  // [b][h][s], an upper bound on the row's 2-norm

  DenseRows() = default;
  DenseRows(const HostTensor& t, std::int64_t batch_, std::int64_t heads_, std::int64_t seqlen_,
            std::int64_t dim_, const char* name)
      : batch(batch_), heads(heads_), seqlen(seqlen_), dim(dim_) {
    if (t.shape() != Shape{batch, seqlen, heads, dim})
      throw std::invalid_argument(std::string(name) + " has shape " + t.describe() +
                                  ", expected [" + std::to_string(batch) + "," +
                                  std::to_string(seqlen) + "," + std::to_string(heads) + "," +
                                  std::to_string(dim) + "]");
    data.resize(batch * heads * seqlen * dim);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s < seqlen; ++s) {
          t.read_row(b, s, h, data.data() + ((b * heads + h) * seqlen + s) * dim);
        }
    update_norms();
  }
  // Call after changing `data` directly (the gradient tests perturb inputs in place).
  void update_norms() {
    // sqrt(sum x^2) in double has relative error below (dim + 2) 2^-53; the factor covers it.
    const double up = 1 + (dim + 8) * 0x1p-52;
    norm.resize(data.size() / dim);
    for (std::size_t r = 0; r < norm.size(); ++r) {
      double sq = 0;
      for (std::int64_t c = 0; c < dim; ++c) sq += data[r * dim + c] * data[r * dim + c];
      norm[r] = std::sqrt(sq) * up;
    }
  }
  const double* row(std::int64_t b, std::int64_t h, std::int64_t s) const {
    return data.data() + ((b * heads + h) * seqlen + s) * dim;
  }
  double row_norm(std::int64_t b, std::int64_t h, std::int64_t s) const {
    return norm[(b * heads + h) * seqlen + s];
  }
  // One element's place here ([b][h][s][d]) and in docs/spec.md's contiguous [b, s, h, d] layout,
  // which gradients and bounds use: what maps a direction over `data` onto them.
  struct Element {
    std::size_t dense, spec;
    std::int64_t b, h, s, d;
  };
  template <class F> void for_each_element(F&& f) const {
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s < seqlen; ++s)
          for (std::int64_t d = 0; d < dim; ++d)
            f(Element{static_cast<std::size_t>(((b * heads + h) * seqlen + s) * dim + d),
                      static_cast<std::size_t>(((b * seqlen + s) * heads + h) * dim + d), b, h, s, d});
  }
};

// Made from a ValidProblem only, so the reference's entry points need not validate again.
struct DenseInputs {
  Problem p;
  DenseRows q, k, v, dout;
  DenseInputs(const ValidProblem& problem, const HostTensor& q_, const HostTensor& k_,
              const HostTensor& v_, const HostTensor* dout_)
      : p(problem.get()),
        q(q_, p.batch, p.heads_q, p.seqlen_q, p.head_dim, "Q"),
        k(k_, p.batch, p.heads_kv, p.seqlen_k, p.head_dim, "K"),
        v(v_, p.batch, p.heads_kv, p.seqlen_k, p.head_dim, "V") {
    if (dout_) dout = DenseRows(*dout_, p.batch, p.heads_q, p.seqlen_q, p.head_dim, "dO");
  }
};

// `base` with step * dir added to one of its tensors (`rows`, e.g. &DenseInputs::k; dir in that
// tensor's [b][h][s][d] order) and that tensor's norms updated: the points of a finite difference.
inline DenseInputs perturbed(const DenseInputs& base, DenseRows DenseInputs::*rows, const std::vector<double>& dir,
                             double step) {
  DenseInputs out = base;
  DenseRows& r = out.*rows;
  for (std::size_t x = 0; x < dir.size(); ++x) r.data[x] += step * dir[x];
  r.update_norms();
  return out;
}

}  // namespace flashproof::reference
