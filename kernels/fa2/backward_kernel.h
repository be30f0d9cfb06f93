// The FlashAttention-2 backward: preprocess, main and convert kernels of
// kernels/flash/backward_key_block.h, with one thread block per (key block, batch, kv head), so key
// blocks run in parallel and their dQ contributions meet in global memory: through fp32 atomicAdd,
// or, in deterministic mode, through one slice per key block summed in a fixed order by convert.
#pragma once

#include "kernels/flash/backward_key_block.h"

namespace flashproof::kernels::FP_TARGET {

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) fa2_backward_kernel(FlashBackwardParams p) {
  backward_key_block<Traits>(p, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z),
                             static_cast<int>(blockIdx.x));
}

// p.dq_mode must be DqAccumulation::atomic or ::slices (the API sets it).
template <class Traits>
void launch_fa2_backward(const FlashBackwardParams& p) {
  const FlashShape& s = p.shape;
  const Dim3 grid{static_cast<unsigned>((s.seqlen_k + Traits::kBlockN - 1) / Traits::kBlockN),
                  static_cast<unsigned>(s.batch), static_cast<unsigned>(s.heads_kv)};
  launch_backward<Traits>(p, "fa2_backward", grid, fa2_backward_kernel<Traits>);
}

}  // namespace flashproof::kernels::FP_TARGET
