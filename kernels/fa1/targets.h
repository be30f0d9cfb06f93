// The per-target entry points behind kernels/fa1/api.h: the same kernel source built by g++ for the
// emulator (fa1_emulated.cpp) and by nvcc for the GPU (fa1_gpu.cu). Parameters are already
// validated, pointers are in the target's memory.
#pragma once

#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/params.h"

namespace flashproof::kernels {

namespace emulated {
void fa1_run_forward(const Fa1ForwardParams& p, int head_dim_bucket, algo::TileSet tiles);
void fa1_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles);
}  // namespace emulated

#if defined(FLASHPROOF_HAS_CUDA)
namespace gpu {
void fa1_run_forward(const Fa1ForwardParams& p, int head_dim_bucket, algo::TileSet tiles);
void fa1_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles);
}  // namespace gpu
#endif

}  // namespace flashproof::kernels
