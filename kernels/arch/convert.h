// fp32 -> fp16 / bf16 conversion, round to nearest even (cvt.rn.f16.f32, cvt.rn.bf16.f32), and
// the packing of two converted values into one mma operand register. Device: the cuda_fp16 /
// cuda_bf16 intrinsics. Host: the same rounding on the bit patterns, core/float_format.h's
// round_bits_to (overflow to inf, gradual underflow, NaN stays NaN with the quiet bit set).
#pragma once

#include <bit>
#include <cstdint>

#include "core/float_format.h"
#include "core/host_device.h"
#include "kernels/arch/fragment.h"
#include "kernels/arch/half_bits.h"
#include "kernels/arch/mma.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace flashproof::arch {

// Each conversion for an input type known at compile time (what the kernels call) and chosen at
// run time (tests).
template <MmaTag kTag>
FP_HOST_DEVICE inline std::uint16_t float_to_bits16(float x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kTag == MmaTag::bf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
#else
  return static_cast<std::uint16_t>(
      round_bits_to(std::bit_cast<std::uint32_t>(x), kFp32Format, kTag == MmaTag::bf16 ? kBf16Format : kFp16Format));
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
