// The products behind docs/error-bounds.md (B1'): the FA2/FA1 forward forms S = Q K^T and the backward
// S^T = K Q^T (kernels/tile/warp_products.h add_q_kt; kernels/flash/backward_key_block.h), both with
// mma_m16n8k16 over the head dim in ascending k-steps of 16 from a zero accumulator. The backward's
// logit is the forward's bit for bit exactly when the tensor core gives element (i, j) of A B the
// same bits as element (j, i) of B^T A^T. These per-lane fragment builders let the host warp model
// (tests/kernels/test_arch_fragments.cpp) and the device (tests/kernels/gpu/test_mma_transpose_gpu.cu)
// run the two orders on the same 16 queries and 16 keys.
#pragma once

#include <cstdint>

#include "kernels/arch/mma.h"

namespace flashproof::tests::transposed {

inline constexpr int kRows = 16, kHeadDim = 64;  // 16 queries, 16 keys, 4 k-steps

// Lane `lane`'s A fragment of rows 0..15 and head-dim columns k0..k0+15 of m ([16][kHeadDim] bits).
FP_HOST_DEVICE inline arch::MmaA a_fragment(const std::uint16_t* m, int lane, int k0) {
  arch::MmaA a{};
  for (int i = 0; i < 8; ++i) {
    const arch::MatrixCoord at = arch::mma_a_element(lane, i);
    a.reg[i / 2] |= std::uint32_t{m[at.row * kHeadDim + k0 + at.col]} << (16 * (i % 2));
  }
  return a;
}

// Lane `lane`'s B fragment (16 x 8: k by n) of the transpose of rows n0..n0+7 of m, columns k0..k0+15.
FP_HOST_DEVICE inline arch::MmaB b_fragment(const std::uint16_t* m, int lane, int n0, int k0) {
  arch::MmaB b{};
  for (int i = 0; i < 4; ++i) {
    const arch::MatrixCoord at = arch::mma_b_element(lane, i);
    b.reg[i / 2] |= std::uint32_t{m[(n0 + at.col) * kHeadDim + k0 + at.row]} << (16 * (i % 2));
  }
  return b;
}

// Writes lane `lane`'s elements of a 16 x 8 accumulator into columns n0..n0+7 of out ([16][16]).
FP_HOST_DEVICE inline void store_c(const arch::MmaC& c, int lane, int n0, float* out) {
  for (int i = 0; i < 4; ++i) {
    const arch::MatrixCoord at = arch::mma_c_element(lane, i);
    out[at.row * kRows + n0 + at.col] = c.reg[i];
  }
}

}  // namespace flashproof::tests::transposed
