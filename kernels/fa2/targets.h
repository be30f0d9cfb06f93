// The per-target entry points behind kernels/fa2/api.h: the same kernel source built by g++ for the
// emulator (fa2_emulated.cpp) and by nvcc for the GPU (fa2_gpu.cu); the GPU's memory calls are in
// kernels/flash/gpu_runtime.h. Parameters are already validated, pointers are in the target's memory.
#pragma once

#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/params.h"

namespace flashproof::kernels {

namespace emulated {
void fa2_run_forward(const Fa2ForwardParams& p, int head_dim_bucket, algo::TileSet tiles);
void fa2_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles);
}  // namespace emulated

#if defined(FLASHPROOF_HAS_CUDA)
namespace gpu {
void fa2_run_forward(const Fa2ForwardParams& p, int head_dim_bucket, algo::TileSet tiles);
void fa2_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles);
}  // namespace gpu
#endif

// The tile shapes of the backward's dQ slices (deterministic mode needs one slice per key block).
int fa2_backward_block_n(int head_dim_bucket, algo::TileSet tiles);

}  // namespace flashproof::kernels
