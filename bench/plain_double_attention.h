// Plain, uncertified double-precision attention (the semantics of docs/spec.md): the baseline the certified
// reference's fast path is measured against. Deliberately the straightforward implementation a
// competent engineer writes first: inputs converted once to dense double rows, softmax with max
// subtraction, plain (uncompensated) sums, no error bounds, single-threaded, no SIMD intrinsics.
// Masks and GQA are supported so that it computes exactly what the reference computes.
#pragma once

#include <vector>

#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof::bench {

// Dense results in the layouts of docs/spec.md: O, dQ [b, sq, hq, d]; dK, dV [b, sk, hkv, d]; LSE [b, hq, sq].
struct PlainForward {
  std::vector<double> o, lse;
};
struct PlainBackward {
  std::vector<double> dq, dk, dv;
};

PlainForward plain_forward(const Problem& p, const HostTensor& q, const HostTensor& k,
                           const HostTensor& v);
// Takes the same inputs as reference::backward, so it recomputes P and O per row (O is needed
// for D = rowsum(dO * O)), as the reference does.
PlainBackward plain_backward(const Problem& p, const HostTensor& q, const HostTensor& k,
                             const HostTensor& v, const HostTensor& dout);

}  // namespace flashproof::bench
