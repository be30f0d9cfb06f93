// The bit layout of the binary floating-point formats flashproof works in (fp16, bf16, fp32, and
// fp64 as a source), and the one round-to-nearest-even narrowing between them. Integer arithmetic on
// bit patterns only, so the host oracle, the emulator and device code get the same bits whatever
// the FPU, its rounding mode or x87 would do. Self-contained (standard library and
// core/host_device.h only) because kernels/arch/ uses it without the rest of core/.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace flashproof {

// 1 sign bit, then exponent_bits exponent bits, then fraction_bits stored fraction bits.
struct FloatFormat {
  int exponent_bits;
  int fraction_bits;

  FP_HOST_DEVICE constexpr int width() const { return 1 + exponent_bits + fraction_bits; }
  FP_HOST_DEVICE constexpr int bias() const { return (1 << (exponent_bits - 1)) - 1; }
};

inline constexpr FloatFormat kFp16Format{5, 10};
inline constexpr FloatFormat kBf16Format{8, 7};
inline constexpr FloatFormat kFp32Format{8, 23};
inline constexpr FloatFormat kFp64Format{11, 52};

// Rounds the value whose bit pattern in format `from` is `bits` to format `to`, once, to nearest
// with ties to even, and returns to's bit pattern. A narrowing: `to` has at most from's exponent
// bits and at most min(from's, 51) fraction bits (a wider exponent would need subnormal inputs
// normalised). Overflow gives inf, signed zero and subnormals are kept, and NaN becomes to's
// canonical quiet NaN (quiet bit only, payload dropped) with the sign kept.
FP_HOST_DEVICE constexpr std::uint64_t round_bits_to(std::uint64_t bits, FloatFormat from, FloatFormat to) {
  const std::uint64_t sign = ((bits >> (from.width() - 1)) & 1) << (to.width() - 1);
  const int e = static_cast<int>((bits >> from.fraction_bits) & ((1u << from.exponent_bits) - 1));
  const std::uint64_t frac = bits & ((std::uint64_t{1} << from.fraction_bits) - 1);
  const std::uint64_t exp_all_ones = ((std::uint64_t{1} << to.exponent_bits) - 1) << to.fraction_bits;
  if (e == (1 << from.exponent_bits) - 1) {
    return sign | exp_all_ones | (frac != 0 ? std::uint64_t{1} << (to.fraction_bits - 1) : 0);
  }
  // x = sig * 2^(unbiased - 52): the significand with its hidden bit, moved up to a double's 53 bits
  // (subnormals: exponent field 0, no hidden bit, the exponent of field 1).
  const std::uint64_t sig = (e == 0 ? frac : frac | (std::uint64_t{1} << from.fraction_bits))
                            << (52 - from.fraction_bits);
  const int unbiased = (e == 0 ? 1 : e) - from.bias();
  const int biased = unbiased + to.bias();
  if (biased >= (1 << to.exponent_bits) - 1) return sign | exp_all_ones;  // >= 2^(emax+1): inf
  // Below the normal range the target exponent stays at emin (field 1) and extra bits are dropped,
  // which yields the subnormal fraction; a carry out of it lands in the exponent field correctly.
  const int field = biased < 1 ? 1 : biased;
  const int shift = 52 - to.fraction_bits + (field - biased);
  // Below half the min subnormal everything rounds to zero (this also keeps the shifts < 64).
  if (shift > 53) return sign;
  std::uint64_t q = sig >> shift;
  const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  // Ties to even, without a branch: the direction is random for random values, so a branch here
  // would be mispredicted half the time.
  q += static_cast<std::uint64_t>(rem > half) | (static_cast<std::uint64_t>(rem == half) & (q & 1));
  // q carries the hidden bit for normals, so adding (field-1) yields the exponent field; a carry
  // out of the fraction bumps the exponent (max finite + carry gives exactly the inf pattern).
  return sign | ((static_cast<std::uint64_t>(field - 1) << to.fraction_bits) + q);
}

}  // namespace flashproof
