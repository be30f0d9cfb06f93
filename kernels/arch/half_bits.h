// Exact decoding of fp16, bf16 and fp32 bit patterns for the host implementations in kernels/arch/.
// The formats themselves are core/float_format.h's (self-contained, so arch/ needs no more of core/).
// Every fp16 and bf16 value is an fp32 value, so these conversions never round.
#pragma once

#include <bit>
#include <cstdint>

#include "core/float_format.h"
#include "core/host_device.h"

namespace flashproof::arch {

// Arch code and its users name the formats arch::kFp16Format etc.
using flashproof::FloatFormat;
using flashproof::kBf16Format;
using flashproof::kFp16Format;
using flashproof::kFp32Format;

enum class FloatKind { finite, infinite, nan };

// A finite value is (-1)^negative * significand * 2^exponent with an integer significand (the
// hidden bit included for normal numbers), so products and sums of them can be formed exactly.
struct DecodedFloat {
  bool negative = false;
  FloatKind kind = FloatKind::finite;
  std::uint32_t significand = 0;
  int exponent = 0;
};

// The exponent of a subnormal's last fraction bit: fp16 -24, bf16 -133, fp32 -149.
FP_HOST_DEVICE constexpr int min_exponent(FloatFormat f) {
  return 1 - f.bias() - f.fraction_bits;
}

FP_HOST_DEVICE constexpr DecodedFloat decode(std::uint32_t bits, FloatFormat f) {
  const std::uint32_t fraction = bits & ((1u << f.fraction_bits) - 1);
  const std::uint32_t exponent_mask = (1u << f.exponent_bits) - 1;
  const std::uint32_t biased = (bits >> f.fraction_bits) & exponent_mask;
  DecodedFloat d;
  d.negative = ((bits >> (f.fraction_bits + f.exponent_bits)) & 1u) != 0;
  if (biased == exponent_mask) {
    d.kind = fraction == 0 ? FloatKind::infinite : FloatKind::nan;
  } else if (biased == 0) {  // zero or subnormal: no hidden bit
    d.significand = fraction;
    d.exponent = min_exponent(f);
  } else {
    d.significand = fraction | (1u << f.fraction_bits);
    d.exponent = min_exponent(f) + static_cast<int>(biased) - 1;
  }
  return d;
}

// fp16 -> fp32 bit pattern; NaN payloads move to the top of the fp32 fraction (as cvt does).
FP_HOST_DEVICE constexpr std::uint32_t fp16_bits_to_fp32_bits(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  const std::uint32_t biased = (h >> 10) & 0x1Fu;
  const std::uint32_t fraction = h & 0x3FFu;
  if (biased == 0x1F) return sign | 0x7F800000u | (fraction << 13);
  if (biased != 0) return sign | ((biased + 112) << 23) | (fraction << 13);  // rebias 15 -> 127
  if (fraction == 0) return sign;
  // Subnormal fraction * 2^-24: normalise so that the leading bit becomes the hidden bit.
  int msb = 9;
  while (((fraction >> msb) & 1u) == 0) --msb;
  const std::uint32_t fp32_biased = static_cast<std::uint32_t>(msb + 103);  // (msb - 24) + 127
  return sign | (fp32_biased << 23) | ((fraction << (23 - msb)) & 0x7FFFFFu);
}

// bf16 is the upper half of an fp32.
FP_HOST_DEVICE constexpr std::uint32_t bf16_bits_to_fp32_bits(std::uint16_t h) {
  return std::uint32_t{h} << 16;
}

inline float fp16_bits_to_float(std::uint16_t h) { return std::bit_cast<float>(fp16_bits_to_fp32_bits(h)); }
inline float bf16_bits_to_float(std::uint16_t h) { return std::bit_cast<float>(bf16_bits_to_fp32_bits(h)); }

}  // namespace flashproof::arch
