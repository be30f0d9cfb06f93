// The CUDA vocabulary a kernel source uses, for its host build under the emulator. Included by
// kernels/launch.h; with nvcc (__CUDACC__) it adds nothing.
#pragma once

#if !defined(__CUDACC__)
#include "kernels/emu/emulator.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

#define threadIdx (::flashproof::emu::thread_idx())
#define blockIdx (::flashproof::emu::block_idx())
#define blockDim (::flashproof::emu::block_dim())
#define gridDim (::flashproof::emu::grid_dim())
#define __syncthreads() ::flashproof::emu::sync_block()
#endif
