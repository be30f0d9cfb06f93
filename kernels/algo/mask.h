// The mask predicate: does query row i see key column j? Bottom-right aligned (docs/spec.md "Semantics"): with
// offset = seqlen_k - seqlen_q, i sees j iff i + offset - left <= j <= i + offset + right, a
// negative side being unbounded. Causal is (left, right) = (-1, 0). Templated on the integer domain
// so that kernels, the emulator, the reference and the Z3 proofs share this one definition.
// The window sides are compared with the distance j - diag instead of being added to diag: a side
// can be any value up to the type's maximum (a case file may say 2^63 - 1), and diag + side would
// overflow, while |j - diag| stays below seqlen_q + 2 seqlen_k, which Problem::validate keeps far
// from it. Over Z3's unbounded integers both forms mean the same.
#pragma once

#include "core/host_device.h"

namespace flashproof::algo {

template <class Int>
struct WindowMask {
  Int offset;        // seqlen_k - seqlen_q
  Int window_left;   // < 0: unbounded
  Int window_right;  // < 0: unbounded

  // Returns bool for integers and a Boolean z3::expr in the proofs.
  FP_HOST_DEVICE auto visible(Int i, Int j) const {
    const Int diag = i + offset;
    const auto right_ok = window_right < 0 || j - diag <= window_right;
    const auto left_ok = window_left < 0 || diag - j <= window_left;
    return right_ok && left_ok;
  }
};

}  // namespace flashproof::algo
