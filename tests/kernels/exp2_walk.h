// Every non-NaN fp32 input of exp2 in increasing order, and the properties the floating-point
// proofs assume of it (docs/proofs.md, theorem 6: E1-E5), checked on one input and its successor.
// Shared by the host's exhaustive check and the GPU's (ex2.approx.ftz.f32), so both walk the same
// 2^32 - 2^24 + 2 inputs and judge them alike.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace flashproof::tests::exp2_walk {

// -inf, ..., -min subnormal, -0, +0, +min subnormal, ..., +inf.
inline constexpr std::uint64_t kCount = 2 * std::uint64_t{0x7F800001};

FP_HOST_DEVICE inline std::uint32_t input_bits(std::uint64_t k) {
  return k <= 0x7F800000u ? static_cast<std::uint32_t>(0xFF800000u - k)
                          : static_cast<std::uint32_t>(k - 0x7F800001u);
}

enum Violation : unsigned {
  kNaN = 1,          // E3: exp2 of a non-NaN input is NaN
  kNegative = 2,     // E3: the sign bit set (-0 or negative)
  kInfAtNonPositive = 4,  // E3: +inf for x <= 0
  kAboveOne = 8,     // E4: x <= 0 and exp2(x) > 1
  kDecreasing = 16,  // E5: exp2(next input) < exp2(x)
  kSpecial = 32,     // E1, E2: exp2(-inf) is not +0 or exp2(+-0) is not 1
};
inline constexpr int kViolationKinds = 6;

// x's bits, y = exp2(x) and y_next = exp2 of the next input (ignored for the last input).
FP_HOST_DEVICE inline unsigned violations(std::uint64_t k, std::uint32_t x_bits, float x, float y,
                                          std::uint32_t y_bits, float y_next) {
  unsigned v = 0;
  if (y != y) v |= kNaN;
  if (y_bits >> 31) v |= kNegative;
  if (x <= 0 && y_bits == 0x7F800000u) v |= kInfAtNonPositive;
  if (x <= 0 && y > 1.0f) v |= kAboveOne;
  if (k + 1 < kCount && !(y <= y_next)) v |= kDecreasing;
  if ((x_bits == 0xFF800000u && y_bits != 0u) || ((x_bits & 0x7FFFFFFFu) == 0u && y != 1.0f)) v |= kSpecial;
  return v;
}

inline const char* violation_name(int kind) {
  static const char* names[kViolationKinds] = {"E3 NaN", "E3 sign bit set", "E3 +inf at x <= 0",
                                               "E4 above 1 at x <= 0", "E5 decreasing", "E1/E2 special value"};
  return names[kind];
}

}  // namespace flashproof::tests::exp2_walk
