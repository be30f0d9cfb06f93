// The FlashAttention-1 backward (Algorithm 4 of the FlashAttention paper, with the LSE stored by the
// forward instead of l and m): one thread block per (batch, kv head) walks the key blocks in order
// (the outer loop); for each, the query blocks that see it stream through (the inner loop), P is
// recomputed, dK and dV of the key block accumulate in registers and are written when the block is
// done, and dQ accumulates in global memory. The per-key-block work is the one FA2 uses
// (kernels/flash/backward_key_block.h); what makes this FA1 is the schedule: one thread block owns
// all of a head's rows, so dQ is a plain read-modify-write (no atomics) and the result is
// bitwise reproducible.
#pragma once

#include "kernels/flash/backward_key_block.h"

namespace flashproof::kernels::FP_TARGET {

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) fa1_backward_kernel(FlashBackwardParams p) {
  const int batch = static_cast<int>(blockIdx.x), kv_head = static_cast<int>(blockIdx.y);
  const int key_blocks = (p.shape.seqlen_k + Traits::kBlockN - 1) / Traits::kBlockN;
  for (int n_block = 0; n_block < key_blocks; ++n_block) {
    backward_key_block<Traits>(p, batch, kv_head, n_block);
    __syncthreads();  // the next key block's copies overwrite K and V
  }
}

// p.dq_mode must be DqAccumulation::owned (the API sets it).
template <class Traits>
void launch_fa1_backward(const FlashBackwardParams& p) {
  const Dim3 grid{static_cast<unsigned>(p.shape.batch), static_cast<unsigned>(p.shape.heads_kv), 1};
  launch_backward<Traits>(p, "fa1_backward", grid, fa1_backward_kernel<Traits>);
}

}  // namespace flashproof::kernels::FP_TARGET
