// The softmax pieces of the backward pass: P recomputed from the stored LSE, and the softmax
// gradient dS = P * (dP - D) with D = rowsum(dO * O). Proved in proofs/ (docs/proofs.md,
// theorems 4 and 6). x is the logit in log2 units (online_softmax.h, scaled_logit).
#pragma once

#include "kernels/algo/domain.h"

namespace flashproof::algo {

// The stored natural-log LSE in log2 units, computed once per row.
template <class T>
FP_HOST_DEVICE T lse_log2(T lse, T log2e) {
  return Domain<T>::mul(lse, log2e);
}

// P = exp2(x - LSE_log2). The exact argument is <= 0 (LSE is at least every logit of its row), but
// x and LSE_log2 are rounded along different paths, and for logits near 2^64 the rounded argument
// can exceed 0 by 2^40, which would overflow exp2. Clamping it at 0 changes no exact value and keeps
// P in [0, 1]. A NaN argument is not clamped (it compares false) so a defect stays visible.
// A row with LSE = +inf (no visible key) gets P = exp2(-inf) = 0.
template <class T>
FP_HOST_DEVICE T recompute_prob(T x, T lse_in_log2) {
  using D = Domain<T>;
  const T arg = x - lse_in_log2;
  const T zero = D::lit(0, arg);
  return D::exp2(D::select(arg > zero, zero, arg));
}

// One coordinate of D = rowsum(dO * O): the backward's preprocess folds the head-dim coordinates
// in order, dot = row_dot_step(dot, dO_c, O_c), starting from 0.
template <class T>
FP_HOST_DEVICE T row_dot_step(T dot, T dout, T o) {
  return dot + Domain<T>::mul(dout, o);
}

// dS = P * (dP - D), the gradient of the loss with respect to the logit (before the scale).
template <class T>
FP_HOST_DEVICE T softmax_grad(T p, T dp, T d) {
  return Domain<T>::mul(p, dp - d);
}

}  // namespace flashproof::algo
