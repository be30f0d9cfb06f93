// The kernels of kernels/sample_kernels.h behind plain host functions, each run two ways: on the
// GPU (sample_runs_gpu.cu: the nvcc build of the kernels, namespace kernels::gpu) and on the
// emulator (sample_runs_emulated.cpp: the g++ build, namespace kernels::emulated). One translation
// unit cannot hold both builds (FP_TARGET and the CUDA vocabulary are fixed per compiler), so the
// test that compares them (test_gpu_vs_emulator.cpp) sees only these declarations.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/arch/mma.h"

namespace flashproof::tests::samples {

// sample_matmul: C[m][n] (fp32) = A[m][k] x B, with B stored [n][k]; a and b hold 16-bit patterns
// of the format `tag` names. m % 64 == 0, n % 16 == 0, k % 16 == 0.
struct MatmulInput {
  int m = 0, n = 0, k = 0;
  arch::MmaTag tag = arch::MmaTag::fp16;
  std::vector<std::uint16_t> a, b;
};
std::vector<float> matmul_gpu(const MatmulInput& input);
std::vector<float> matmul_emulated(const MatmulInput& input);

// sample_block_sum: one sum per block of `threads` consecutive inputs (threads a multiple of 32).
std::vector<float> block_sum_gpu(const std::vector<float>& in, unsigned threads);
std::vector<float> block_sum_emulated(const std::vector<float>& in, unsigned threads);

// sample_atomic_histogram: bins[i % bin_count] = sum of in[i] by fp32 atomicAdd, in blocks of
// `threads` (in.size() a multiple of threads).
std::vector<float> atomic_histogram_gpu(const std::vector<float>& in, unsigned threads, int bin_count);
std::vector<float> atomic_histogram_emulated(const std::vector<float>& in, unsigned threads, int bin_count);

}  // namespace flashproof::tests::samples
