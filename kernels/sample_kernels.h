// Small kernels that exercise the emulator and the arch wrappers together, used by the emulator's
// tests (tests/kernels/emu), its benchmark (bench/emulator_bench.cpp) and the GPU-versus-emulator
// tests (tests/kernels/gpu), which build this header with nvcc as well: a tiled matrix product
// through cp.async, ldmatrix and mma, a block sum through warp shuffles, shared memory and a
// barrier, and an fp32 atomicAdd histogram. It sits in kernels/, not tests/, so that bench/ runs it
// without depending on tests/; it depends on kernels/arch/ and kernels/launch.h only.
#pragma once

#include <cstdint>

#include "kernels/arch/atomic.h"
#include "kernels/arch/cp_async.h"
#include "kernels/arch/ldmatrix.h"
#include "kernels/arch/mma.h"
#include "kernels/arch/smem.h"
#include "kernels/arch/warp.h"
#include "kernels/launch.h"

namespace flashproof::kernels::FP_TARGET {

// C[M][N] (fp32) = A[M][K] (16-bit, row-major) x B, with B stored [N][K] (16-bit), M % 64 == 0,
// N % 16 == 0, K % 16 == 0. A block of 4 warps computes a 64 x 16 tile; each warp 16 x 16 as two
// m16n8k16 products per 16-wide slice of K. The slices pass through shared memory:
// A_s[64][16] then B_s[16][16]. With skip_second_barrier the slice buffer is overwritten while
// other warps may still read it (the classic missing barrier).
constexpr unsigned kSampleThreads = 128;
constexpr unsigned kSampleSmemBytes = (64 * 16 + 16 * 16) * 2;

__global__ void sample_matmul(const std::uint16_t* a, const std::uint16_t* b, float* c, int n, int k,
                              arch::MmaTag tag, bool skip_second_barrier) {
  std::uint16_t* a_s = dynamic_smem<std::uint16_t>();
  std::uint16_t* b_s = a_s + 64 * 16;
  const unsigned t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int row0 = static_cast<int>(blockIdx.x) * 64, col0 = static_cast<int>(blockIdx.y) * 16;
  arch::MmaC acc[2] = {};
  for (int k0 = 0; k0 < k; k0 += 16) {
    // 128 threads copy the A slice (64 rows x 2 halves of 16 bytes); threads 0-31 the B slice.
    arch::cp_async_16(a_s + (t / 2) * 16 + (t % 2) * 8, a + static_cast<long>(row0 + t / 2) * k + k0 + (t % 2) * 8);
    if (t < 32) arch::cp_async_16(b_s + (t / 2) * 16 + (t % 2) * 8, b + static_cast<long>(col0 + t / 2) * k + k0 + (t % 2) * 8);
    arch::cp_async_commit();
    arch::cp_async_wait<0>();
    __syncthreads();
    arch::MmaA frag_a;
    arch::ldmatrix<4>(a_s + (warp * 16 + lane % 16) * 16 + 8 * (lane / 16), frag_a.reg);
    for (int j = 0; j < 2; ++j) {
      arch::MmaB frag_b;
      arch::ldmatrix<2>(b_s + (j * 8 + lane % 8) * 16 + 8 * ((lane / 8) % 2), frag_b.reg);
      acc[j] = arch::mma_m16n8k16(tag, frag_a, frag_b, acc[j]);
    }
    if (!skip_second_barrier) __syncthreads();
  }
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 4; ++i) {
      const arch::MatrixCoord at = arch::mma_c_element(static_cast<int>(lane), i);
      c[static_cast<long>(row0 + warp * 16 + at.row) * n + col0 + j * 8 + at.col] = acc[j].reg[i];
    }
  }
}

// out[block] = sum of in[block * blockDim.x + t] over the block's threads (blockDim.x a multiple
// of 32, at most 32 warps; dynamic shared memory: one float per warp). Each warp reduces with an
// xor butterfly of shuffles, lane 0 stores the warp's partial, and after the barrier thread 0 adds
// the partials in warp order: a fixed order of fp32 additions, the same on the GPU and emulated.
__global__ void sample_block_sum(const float* in, float* out) {
  float* partial = dynamic_smem<float>();
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  float v = in[blockIdx.x * blockDim.x + t];
  for (int offset = 16; offset > 0; offset /= 2) v += arch::shfl_xor(v, offset);
  if (lane == 0) arch::smem_store(&partial[warp], v);
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) s += arch::smem_load(&partial[w]);
    out[blockIdx.x] = s;
  }
}

// bins[i % bin_count] += in[i] with fp32 atomicAdd, i the global thread index (grid and block in x
// only). The order of the additions into a bin is whatever the blocks' schedule makes it.
__global__ void sample_atomic_histogram(const float* in, float* bins, int bin_count) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  arch::atomic_add(&bins[i % static_cast<unsigned>(bin_count)], in[i]);
}

}  // namespace flashproof::kernels::FP_TARGET
