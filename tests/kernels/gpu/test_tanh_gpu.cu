// The soft cap's tanh on the device (arch::tanh_fp32: CUDA's tanhf, as the FA2 kernels call it)
// against what the bounds and the proofs assume of it (tests/kernels/tanh_walk.h), on every
// non-negative fp32 input and its negation; the exact value is CUDA's double tanh. ctest label
// "gpu": skipped where no GPU can be used.
#include <gtest/gtest.h>

#include <bit>
#include <sstream>

#include "kernels/arch/scalar_math.h"
#include "tests/gpu_support.h"
#include "tests/kernels/tanh_walk.h"

namespace flashproof::tests::tanh_walk {
namespace {

__global__ void walk_kernel(unsigned long long* first) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < kCount; k += step) {
    const float x = __uint_as_float(static_cast<unsigned>(k));
    const float next = __uint_as_float(static_cast<unsigned>(k + 1 < kCount ? k + 1 : k));
    const unsigned v = violations(k, arch::tanh_fp32(x), arch::tanh_fp32(-x), arch::tanh_fp32(next),
                                  tanh(static_cast<double>(x)));
    if (v)
      for (int kind = 0; kind < kViolationKinds; ++kind)
        if (v & (1u << kind)) atomicMin(first + kind, static_cast<unsigned long long>(k));
  }
}

TEST(TanhGpu, TanhfHasTheAssumedPropertiesOnEveryInput) {
  FLASHPROOF_REQUIRE_GPU();
  unsigned long long* first = nullptr;
  ASSERT_EQ(cudaMalloc(&first, kViolationKinds * sizeof(unsigned long long)), cudaSuccess);
  unsigned long long host[kViolationKinds];
  for (auto& h : host) h = kCount;
  ASSERT_EQ(cudaMemcpy(first, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
  walk_kernel<<<4096, 256>>>(first);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(host, first, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(first);
  std::ostringstream found;
  for (int kind = 0; kind < kViolationKinds; ++kind)
    if (host[kind] < kCount)
      found << violation_name(kind) << " first at input " << std::hexfloat
            << std::bit_cast<float>(static_cast<unsigned>(host[kind])) << "\n";
  EXPECT_EQ(found.str(), "") << "tanhf breaks an assumption of the bounds or the proofs";
}

}  // namespace
}  // namespace flashproof::tests::tanh_walk
