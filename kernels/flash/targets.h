// The per-target entry points of a kernel family (FA1, FA2): the same kernel source built by g++ for
// the emulator (faN/faN_emulated.cpp) and by nvcc for the GPU (faN/faN_gpu.cu), each instantiating
// kernels/flash/instantiate.h for its family; and run_forward_on / run_backward_on, which call the
// target the pointers live in. Parameters are already validated, pointers are in the target's memory.
#pragma once

#include "kernels/algo/tile_configs.h"
#include "kernels/flash/api.h"
#include "kernels/flash/gpu_runtime.h"
#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct Fa2DecodeParams;  // kernels/fa2/params.h

namespace emulated {
// FA2's decode path (kernels/fa2/decode_kernel.h): the decode kernel and, with splits, the combine.
void run_fa2_decode(const Fa2DecodeParams& p, int head_dim_bucket);
template <algo::KernelFamily kFamily, class ForwardParams>
void run_forward(const ForwardParams& p, int head_dim_bucket, algo::TileSet tiles);
template <algo::KernelFamily kFamily>
void run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles);
}  // namespace emulated

#if defined(FLASHPROOF_HAS_CUDA)
namespace gpu {
void run_fa2_decode(const Fa2DecodeParams& p, int head_dim_bucket);
template <algo::KernelFamily kFamily, class ForwardParams>
void run_forward(const ForwardParams& p, int head_dim_bucket, algo::TileSet tiles);
template <algo::KernelFamily kFamily>
void run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles);
}  // namespace gpu
#endif

namespace flash {

// A GPU launch is asynchronous; a call that frees a workspace on return waits for it first
// (`workspace`), so do all backwards.
template <algo::KernelFamily kFamily, class ForwardParams>
void run_forward_on(FlashTarget target, const ForwardParams& p, int head_dim_bucket, algo::TileSet tiles,
                    bool workspace) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) {
    gpu::run_forward<kFamily>(p, head_dim_bucket, tiles);
    if (workspace) gpu::synchronize();
    return;
  }
#else
  (void)target, (void)workspace;
#endif
  emulated::run_forward<kFamily>(p, head_dim_bucket, tiles);
}

template <algo::KernelFamily kFamily>
void run_backward_on(FlashTarget target, const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) {
    gpu::run_backward<kFamily>(p, head_dim_bucket, tiles);
    gpu::synchronize();
    return;
  }
#else
  (void)target;
#endif
  emulated::run_backward<kFamily>(p, head_dim_bucket, tiles);
}

inline void run_fa2_decode_on(FlashTarget target, const Fa2DecodeParams& p, int head_dim_bucket) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) {
    gpu::run_fa2_decode(p, head_dim_bucket);
    gpu::synchronize();  // the call's workspaces are freed on return
    return;
  }
#else
  (void)target;
#endif
  emulated::run_fa2_decode(p, head_dim_bucket);
}

}  // namespace flash
}  // namespace flashproof::kernels
