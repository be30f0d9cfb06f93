// The soft cap's tanh on the host (arch::tanh_fp32: glibc's tanhf) against what the bounds and the
// proofs assume of it (tests/kernels/tanh_walk.h), on every 257th non-negative fp32 input and on
// every input of the ranges where tanhf changes method (below 2^-12, around 0.55, 9 and 2^4):
// an exhaustive walk costs a minute of CI time here; the GPU's walk (gpu/test_tanh_gpu.cu) is
// exhaustive. The twin: a tanh of 12 significant bits (as tanh.approx.f32's 2^-11 error) is caught.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <vector>

#include "kernels/arch/scalar_math.h"
#include "tests/kernels/tanh_walk.h"

namespace flashproof::tests::tanh_walk {
namespace {

using Tanh = float (*)(float);

float coarse_tanh(float x) {  // 12 significant bits
  const float t = std::tanh(x);
  int e = 0;
  const float m = std::frexp(t, &e);
  return std::ldexp(std::round(m * 4096.0f) / 4096.0f, e);
}

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }

std::string walk(Tanh tanh_f) {
  std::vector<std::uint64_t> inputs;
  for (std::uint64_t k = 0; k < kCount; k += 257) inputs.push_back(k);
  for (float lo : {0x1p-13f, 0.5f, 8.5f, 15.0f})  // every input of [lo, 1.02 lo]
    for (std::uint32_t b = bits_of(lo); b <= bits_of(lo * 1.02f); ++b) inputs.push_back(b);
  inputs.push_back(kCount - 1);  // +inf
  std::array<std::uint64_t, kViolationKinds> first;
  first.fill(kCount);
  for (std::uint64_t k : inputs) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(k));
    const float next = std::bit_cast<float>(static_cast<std::uint32_t>(k + 1 < kCount ? k + 1 : k));
    const unsigned v = violations(k, tanh_f(x), tanh_f(-x), tanh_f(next), std::tanh(static_cast<double>(x)));
    for (int kind = 0; kind < kViolationKinds; ++kind)
      if ((v & (1u << kind)) && k < first[kind]) first[kind] = k;
  }
  std::ostringstream found;
  for (int kind = 0; kind < kViolationKinds; ++kind)
    if (first[kind] < kCount)
      found << violation_name(kind) << " first at " << std::hexfloat
            << std::bit_cast<float>(static_cast<std::uint32_t>(first[kind])) << "\n";
  return found.str();
}

TEST(TanhAxioms, HostTanhHasTheAssumedProperties) {
  EXPECT_EQ(walk(arch::tanh_fp32), "") << "the host's tanhf breaks an assumption of the bounds or the proofs";
}

TEST(TanhAxioms, ACoarseTanhIsCaught) {
  EXPECT_NE(walk(coarse_tanh).find("beyond 2^-22 relative"), std::string::npos);
}

}  // namespace
}  // namespace flashproof::tests::tanh_walk
