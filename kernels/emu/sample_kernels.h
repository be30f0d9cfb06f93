// Small kernels that exercise the emulator and the arch wrappers together, used by the emulator's
// tests and benchmark: a tiled matrix product through cp.async, ldmatrix and mma.
#pragma once

#include <cstdint>

#include "kernels/arch/cp_async.h"
#include "kernels/arch/ldmatrix.h"
#include "kernels/arch/mma.h"
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

}  // namespace flashproof::kernels::FP_TARGET
