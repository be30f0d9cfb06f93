// fp32 -> fp16 / bf16 conversion, round to nearest even (cvt.rn.f16.f32, cvt.rn.bf16.f32), and
// the packing of two converted values into one mma operand register. Device: the cuda_fp16 /
// cuda_bf16 intrinsics. Host: the same rounding on the bit patterns (overflow to inf, gradual
// underflow, NaN stays NaN with the quiet bit set).
#pragma once

#include <bit>
#include <cstdint>

#include "kernels/algo/host_device.h"
#include "kernels/arch/fragment.h"
#include "kernels/arch/half_bits.h"
#include "kernels/arch/mma.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace flashproof::arch {

// Host model: round the fp32 bit pattern `bits` to a format with fewer fraction bits and the same
// or fewer exponent bits, to nearest even.
FP_HOST_DEVICE constexpr std::uint16_t round_fp32_bits_to(std::uint32_t bits, FloatFormat f) {
  const std::uint32_t sign = (bits >> 31) << (f.fraction_bits + f.exponent_bits);
  const std::uint32_t abs = bits & 0x7FFFFFFFu;
  const std::uint32_t inf = ((1u << f.exponent_bits) - 1) << f.fraction_bits;
  if (abs > 0x7F800000u) return static_cast<std::uint16_t>(sign | inf | (1u << (f.fraction_bits - 1)));
  if (abs == 0x7F800000u) return static_cast<std::uint16_t>(sign | inf);
  // |x| = significand * 2^exponent with a 24-bit significand (hidden bit included).
  const int biased = static_cast<int>(abs >> 23);
  std::uint64_t significand = (abs & 0x7FFFFFu) | (biased != 0 ? 0x800000u : 0u);
  int exponent = (biased != 0 ? biased : 1) - 150;
  // Target spacing at this magnitude: 2^(e_min) for subnormals, else 2^(exponent of msb - fraction_bits).
  const int target_bias = (1 << (f.exponent_bits - 1)) - 1;
  const int target_min = 1 - target_bias - f.fraction_bits;  // exponent of the smallest subnormal
  int msb = 63;
  while (msb >= 0 && ((significand >> msb) & 1u) == 0) --msb;
  if (msb < 0) return static_cast<std::uint16_t>(sign);
  int quantum = exponent + msb - f.fraction_bits;  // exponent of the last kept bit
  if (quantum < target_min) quantum = target_min;
  const int shift = quantum - exponent;
  std::uint64_t kept = significand;
  if (shift > 0) {
    if (shift >= 40) {
      kept = 0;
      // Below half the smallest subnormal: rounds to zero.
    } else {
      const std::uint64_t rest = significand & ((std::uint64_t{1} << shift) - 1);
      const std::uint64_t half = std::uint64_t{1} << (shift - 1);
      kept = significand >> shift;
      if (rest > half || (rest == half && (kept & 1u))) ++kept;
    }
  } else {
    kept <<= -shift;
  }
  // kept * 2^quantum. The biased exponent is quantum - target_min + 1 for normals (kept holds the
  // hidden bit) and 0 for subnormals; both encode as below, and a rounding carry into the next
  // binade (kept = 2^(fraction_bits + 1)) lands on the right encoding too.
  const std::uint64_t value_bits = (static_cast<std::uint64_t>(quantum - target_min) << f.fraction_bits) + kept;
  if (value_bits >= inf) return static_cast<std::uint16_t>(sign | inf);
  return static_cast<std::uint16_t>(sign | value_bits);
}

// Each conversion for an input type known at compile time (what the kernels call) and chosen at
// run time (tests).
template <MmaTag kTag>
FP_HOST_DEVICE inline std::uint16_t float_to_bits16(float x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kTag == MmaTag::bf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
#else
  return round_fp32_bits_to(std::bit_cast<std::uint32_t>(x), kTag == MmaTag::bf16 ? kBf16Format : kFp16Format);
#endif
}

template <MmaTag kTag>
FP_HOST_DEVICE inline float bits16_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  if constexpr (kTag == MmaTag::bf16) return __bfloat162float(__ushort_as_bfloat16(h));
  else return __half2float(__ushort_as_half(h));
#else
  return kTag == MmaTag::bf16 ? bf16_bits_to_float(h) : fp16_bits_to_float(h);
#endif
}

// Two fp32 values rounded and packed as one operand register, `low` in the low half.
template <MmaTag kTag>
FP_HOST_DEVICE inline std::uint32_t pack_rounded(float low, float high) {
  return pack_halves(float_to_bits16<kTag>(low), float_to_bits16<kTag>(high));
}

FP_HOST_DEVICE inline std::uint16_t float_to_bits16(MmaTag tag, float x) {
  return tag == MmaTag::bf16 ? float_to_bits16<MmaTag::bf16>(x) : float_to_bits16<MmaTag::fp16>(x);
}

FP_HOST_DEVICE inline float bits16_to_float(MmaTag tag, std::uint16_t h) {
  return tag == MmaTag::bf16 ? bits16_to_float<MmaTag::bf16>(h) : bits16_to_float<MmaTag::fp16>(h);
}

FP_HOST_DEVICE inline std::uint32_t pack_rounded(MmaTag tag, float low, float high) {
  return pack_halves(float_to_bits16(tag, low), float_to_bits16(tag, high));
}

}  // namespace flashproof::arch
