// The properties the floating-point proofs assume of exp2 (docs/proofs.md, theorem 6: E1-E5) on
// every fp32 input of the hardware's ex2.approx.ftz.f32 (arch::exp2_approx on the device), walked
// in the order of tests/kernels/exp2_walk.h like the host's model (test_exp2_exhaustive.cpp).
// ctest label "gpu": skipped where no GPU can be used.
#include <gtest/gtest.h>

#include <bit>
#include <sstream>

#include "kernels/arch/scalar_math.h"
#include "tests/gpu_support.h"
#include "tests/kernels/exp2_walk.h"

namespace flashproof::tests::exp2_walk {
namespace {

__global__ void walk_kernel(unsigned long long* first) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < kCount; k += step) {
    const std::uint32_t xb = input_bits(k);
    const float x = __uint_as_float(xb), y = arch::exp2_approx(x);
    const float y_next = k + 1 < kCount ? arch::exp2_approx(__uint_as_float(input_bits(k + 1))) : y;
    if (const unsigned v = violations(k, xb, x, y, __float_as_uint(y), y_next))
      for (int kind = 0; kind < kViolationKinds; ++kind)
        if (v & (1u << kind)) atomicMin(first + kind, static_cast<unsigned long long>(k));
  }
}

TEST(Exp2Gpu, Ex2ApproxHasTheAssumedPropertiesOnEveryInput) {
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
            << std::bit_cast<float>(input_bits(host[kind])) << "\n";
  EXPECT_EQ(found.str(), "") << "ex2.approx.ftz.f32 breaks an assumption of the proofs";
}

}  // namespace
}  // namespace flashproof::tests::exp2_walk
