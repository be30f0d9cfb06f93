// The score modification (FlexAttention's score_mod; docs/spec.md "Soft cap and ALiBi"): what
// becomes of a scaled logit s = softmax_scale * q.k before the softmax, element by element.
//   soft cap (Gemma 2, Grok):      s -> c tanh(s / c), c > 0
//   ALiBi (BLOOM, MPT, Baichuan):  then + bias, bias = -slope_h |i + offset - j|
// with offset = seqlen_k - seqlen_q of the pair's sequence (bottom-right, as the mask). The cap
// comes first, the bias after it, both before the mask and the max (FlashAttention-2's order).
// The one definition: the kernels (through tile::FragmentMask::scaled), the naive baseline, the
// reference and the bounds use these functions.
#pragma once

#include "core/host_device.h"
#include "kernels/algo/domain.h"

namespace flashproof::algo {

// |i + offset - j|: the ALiBi distance of row i to key j, in sequence coordinates. Exact for the
// ints the kernels use (Problem::validate keeps lengths below 2^31) and in int64 on the host.
template <class Int>
FP_HOST_DEVICE Int alibi_distance(Int row, Int key, Int offset) {
  const Int d = row + offset - key;
  return d < 0 ? -d : d;
}

// The kernels' fp32 form, in log2 units (the online softmax's, algo/online_softmax.h): with
// x = scaled_logit(s, scale * log2 e) rounded on its own,
//   capped  x -> cap_log2 * tanh(x * inv_cap_log2)           cap_log2 = fl(c * fl(log2 e)),
//                                                            inv_cap_log2 = fl(1 / cap_log2)
//   biased  x -> x + slope_log2 * float(distance)            slope_log2 = fl(slope * fl(log2 e))
// each product rounded on its own and the sum rounded once. (The log2 e cancels inside tanh:
// x / (c log2 e) = s / c.) The rounding of each step is what docs/error-bounds.md "Score
// modification" bounds.
struct ScoreModLog2 {
  float cap_log2 = 0;      // 0: no cap
  float inv_cap_log2 = 0;
  FP_HOST_DEVICE bool capped() const { return cap_log2 != 0; }
};

// The tanh value of a capped logit: also what the backward's derivative 1 - t^2 is formed from.
template <class T>
FP_HOST_DEVICE T soft_cap_tanh(T x, T inv_cap) {
  return Domain<T>::tanh(Domain<T>::mul(x, inv_cap));
}

template <class T>
FP_HOST_DEVICE T soft_cap(T x, T cap, T inv_cap) {
  return Domain<T>::mul(cap, soft_cap_tanh(x, inv_cap));
}

// d(c tanh(s / c)) / ds = 1 - tanh^2, from the tanh value t; multiplies dS in the backward.
template <class T>
FP_HOST_DEVICE T soft_cap_derivative(T t) {
  return Domain<T>::lit(1, t) - Domain<T>::mul(t, t);
}

// The bias of a pair in log2 units.
template <class T>
FP_HOST_DEVICE T alibi_bias(T slope_log2, T distance) {
  return -Domain<T>::mul(slope_log2, distance);
}

// The kernels' modification of one head's logits (tile::FragmentMask in the FA2 forward, the FA2
// backward's recomputation: one function, so the backward's logits are bitwise the forward's).
// x is the scaled logit (scaled_logit) of query row `row` and key `key`, in the coordinates of the
// launch's sequence; offset = seqlen_k - seqlen_q of that sequence. In order:
//   t = fl(tanh(fl(x * inv_cap_log2)))         when capped (cap_log2 != 0)
//   x = fl(cap_log2 * t)
//   x = fl(x - fl(slope_log2 * float(|row + offset - key|)))   always: with ALiBi off the slope
//                                             is 0 and x + -0 = x bitwise, so no branch
// The distance is exact in int and converted to float (exact below 2^24).
struct HeadScoreModLog2 {
  static constexpr bool kActive = true;
  float cap_log2 = 0;      // 0: no cap
  float inv_cap_log2 = 0;
  float slope_log2 = 0;    // this head's slope * log2 e (0: no ALiBi)
  int offset = 0;          // ALiBi's distance offset: seqlen_k - seqlen_q
  FP_HOST_DEVICE bool capped() const { return cap_log2 != 0; }
  // The modified logit; `t` receives the cap's tanh (left as it was when not capped).
  FP_HOST_DEVICE float operator()(float x, int row, int key, float& t) const {
    if (capped()) {
      t = soft_cap_tanh(x, inv_cap_log2);
      x = Domain<float>::mul(cap_log2, t);
    }
    return x + alibi_bias(slope_log2, static_cast<float>(alibi_distance(row, key, offset)));
  }
};

// No modification: the dense kernels' (an empty type; nothing of it reaches their code).
struct NoScoreMod {
  static constexpr bool kActive = false;
};

}  // namespace flashproof::algo
