// The properties the floating-point proofs assume of exp2 (docs/proofs.md, theorem 6), on every
// fp32 input of the host's model (std::exp2 rounded to float, kernels/arch/scalar_math.h). E4 and
// E5 do not follow from an approximation's relative error bound (2^-22 allows exp2(-2^-30) =
// 1 + 2^-23), so they are assumptions, and this is their check; tests/kernels/gpu runs the same walk
// on ex2.approx.ftz.f32.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <string_view>
#include <sstream>

#include "core/parallel.h"
#include "kernels/arch/scalar_math.h"
#include "tests/kernels/exp2_walk.h"

namespace flashproof::tests::exp2_walk {
namespace {

using Exp2 = float (*)(float);

// The first input index of each kind of violation, kCount where none.
std::array<std::uint64_t, kViolationKinds> walk(Exp2 exp2, std::uint64_t stride = 1) {
  std::array<std::atomic<std::uint64_t>, kViolationKinds> first;
  for (auto& f : first) f = kCount;
  const std::uint64_t chunk = std::uint64_t{1} << 22, chunks = (kCount + chunk - 1) / chunk;
  parallel_for(static_cast<std::int64_t>(chunks), [&](std::int64_t c) {
    const std::uint64_t begin = static_cast<std::uint64_t>(c) * chunk, end = std::min(kCount, begin + chunk);
    float y = exp2(std::bit_cast<float>(input_bits(begin)));
    for (std::uint64_t k = begin; k < end; k += stride) {
      const std::uint32_t xb = input_bits(k);
      const std::uint64_t next = std::min(k + stride, kCount - 1);
      const float y_next = exp2(std::bit_cast<float>(input_bits(next)));
      if (const unsigned v = violations(k, xb, std::bit_cast<float>(xb), y, std::bit_cast<std::uint32_t>(y), y_next))
        for (int kind = 0; kind < kViolationKinds; ++kind)
          if (v & (1u << kind)) {
            std::uint64_t seen = first[kind];
            while (k < seen && !first[kind].compare_exchange_weak(seen, k)) {
            }
          }
      y = y_next;
    }
  });
  std::array<std::uint64_t, kViolationKinds> out;
  for (int kind = 0; kind < kViolationKinds; ++kind) out[kind] = first[kind];
  return out;
}

std::string report(const std::array<std::uint64_t, kViolationKinds>& first, Exp2 exp2) {
  std::ostringstream os;
  for (int kind = 0; kind < kViolationKinds; ++kind)
    if (first[kind] < kCount) {
      const float x = std::bit_cast<float>(input_bits(first[kind]));
      os << violation_name(kind) << ": exp2(" << std::hexfloat << x << ") = " << exp2(x) << "\n";
    }
  return os.str();
}

float host_model(float x) { return arch::exp2_approx(x); }

// Every input with FLASHPROOF_EXHAUSTIVE=1 (ctest label slow: slow.exp2_exhaustive, 2^32 inputs,
// about 45 s of CPU); every 13th otherwise, so that each commit's CI still walks the whole range
// (an odd stride meets every low-bit pattern) at a thirteenth of the cost. The host model is
// std::exp2 rounded to float and changes only with kernels/arch/scalar_math.h.
std::uint64_t host_stride() {
  const char* e = std::getenv("FLASHPROOF_EXHAUSTIVE");
  return e != nullptr && std::string_view(e) == "1" ? 1 : 13;
}

TEST(Exp2Exhaustive, HostModelHasTheAssumedProperties) {
  const auto first = walk(host_model, host_stride());
  EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](std::uint64_t k) { return k == kCount; }))
      << report(first, host_model);
}

// The walk itself on broken models (every 4096th input, so the check stays quick): each violation
// kind is found, including E4 and E5 violations that a 2^-22 relative error would allow.
float above_one_just_below_zero(float x) { return x < 0 && x > -0x1p-20f ? 1.0f + 0x1p-23f : std::exp2(x); }
float dips(float x) { return x > 3.0f && x < 3.5f ? 7.9f : std::exp2(x); }
float nan_at_large(float x) { return x > 100.0f ? x - x + (x > 200 ? NAN : std::exp2(x)) : std::exp2(x); }
float negative_zero(float x) { return x < -150.0f ? -0.0f : std::exp2(x); }
float inf_at_minus_inf(float x) { return x == -INFINITY ? INFINITY : std::exp2(x); }

TEST(Exp2Exhaustive, TheWalkFindsEachBrokenProperty) {
  const std::uint64_t stride = 4096;
  EXPECT_LT(walk(above_one_just_below_zero, stride)[3], kCount);
  EXPECT_LT(walk(dips, stride)[4], kCount);
  EXPECT_LT(walk(nan_at_large, stride)[0], kCount);
  EXPECT_LT(walk(negative_zero, stride)[1], kCount);
  const auto special = walk(inf_at_minus_inf, stride);
  EXPECT_LT(special[2], kCount);
  EXPECT_LT(special[5], kCount);
  EXPECT_EQ(walk(host_model, stride)[4], kCount);
}

}  // namespace
}  // namespace flashproof::tests::exp2_walk
