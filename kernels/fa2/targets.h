// The per-target entry points behind kernels/fa2/api.h: the same kernel source built by g++ for the
// emulator (fa2_emulated.cpp) and by nvcc for the GPU (fa2_gpu.cu), plus the GPU's memory calls.
// Parameters are already validated, pointers are in the target's memory.
#pragma once

#include <cstddef>

#include "kernels/fa2/params.h"

namespace flashproof::kernels {

namespace emulated {
void fa2_run_forward(const Fa2ForwardParams& p, int head_dim_bucket);
void fa2_run_backward(const Fa2BackwardParams& p, int head_dim_bucket);
}  // namespace emulated

#if defined(FLASHPROOF_HAS_CUDA)
namespace gpu {
void fa2_run_forward(const Fa2ForwardParams& p, int head_dim_bucket);
void fa2_run_backward(const Fa2BackwardParams& p, int head_dim_bucket);
bool device_usable();  // a device of compute capability 8.0 or newer
void* device_alloc(std::size_t bytes);
void device_free(void* p);
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);  // after the kernels finish
void synchronize();
}  // namespace gpu
#endif

// The tile shapes of the backward's dQ slices (deterministic mode needs one slice per key block).
int fa2_backward_block_n(int head_dim_bucket);

}  // namespace flashproof::kernels
