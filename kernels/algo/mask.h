// The mask predicate: does query row i see key column j? Bottom-right aligned (docs/spec.md
// "Semantics"): with offset = seqlen_k - seqlen_q, i sees j iff
// i + offset - left <= j <= i + offset + right, a negative side being unbounded. Causal is
// (left, right) = (-1, 0). Templated on the integer domain so that kernels, the emulator, the
// reference and the Z3 proofs share this one definition; pair_kept adds the sequence bounds a
// kernel's tiles need.
// The window sides are compared with the distance j - diag instead of being added to diag: a side
// can be any value up to the type's maximum (a case file may say 2^63 - 1), and diag + side would
// overflow, while |j - diag| stays below seqlen_q + 2 seqlen_k, which Problem::validate keeps far
// from it. Over Z3's unbounded integers both forms mean the same.
#pragma once

#include <type_traits>

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

// How pair_kept joins its three tests. Neither has a side effect, so both give the same value; they
// differ only in the machine code nvcc makes of an unrolled pass over a register fragment, where
// `&&` lets it branch on each test and `&` evaluates them all into selects. Which keeps a kernel
// within its register and instruction budget was measured per kernel on sm_90 (the kernels'
// comments say which uses which).
enum class MaskTest { short_circuit, all_tests };

// The mask a kernel applies to the logit of query row `row` and key `key` (FlexAttention's
// mask_mod): kept iff both lie inside their sequences (a tile's padding rows and keys do not) and
// the row sees the key. The one spelling of the test; the proofs (block_skip_proofs.cpp) show that
// the tiles algo/block_ranges.h classifies mask-free keep every pair by this very predicate.
template <MaskTest kTest = MaskTest::short_circuit, class Int>
FP_HOST_DEVICE auto pair_kept(const WindowMask<Int>& w, Int seqlen_q, Int seqlen_k, Int row, Int key) {
  if constexpr (kTest == MaskTest::all_tests) {
    return (row < seqlen_q) & (key < seqlen_k) & w.visible(row, key);
  } else {
    const auto kept = row < seqlen_q && key < seqlen_k && w.visible(row, key);
    // On machine integers an int, not a bool: nvcc 13 keeps an inlined function's bool result as a
    // byte, and the backward's unrolled mask pass then costs 32 more instructions (PRMT) per step.
    if constexpr (std::is_integral_v<Int>)
      return kept ? 1 : 0;
    else
      return kept;
  }
}

}  // namespace flashproof::algo
