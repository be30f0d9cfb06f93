// Element types of flashproof problems and their IEEE-754 rounding.
// fp16 (binary16) and bf16 (bfloat16) are held as raw bit patterns; every conversion rounds to
// nearest, ties to even, keeps signed zero, produces subnormals, and maps overflow to inf.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/float_format.h"

namespace flashproof {

enum class DType { fp16, bf16, fp32 };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);  // "fp16", "bf16", "fp32"
inline int dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }  // 2, 2, 4
int dtype_mantissa_bits(DType t);                          // stored fraction bits: 10, 7, 23

// Exact widening conversions (every fp16/bf16 value is an fp32 value). NaN stays NaN (quiet).
float fp16_bits_to_float(std::uint16_t bits);
float bf16_bits_to_float(std::uint16_t bits);

// Correctly rounded narrowing (one rounding, RNE). NaN maps to a quiet NaN with the sign kept.
// NaN results (here and in the widenings) are canonical: sign | quiet NaN with no payload (fp16
// 0x7E00, bf16 0x7FC0, fp32 0x7FC00000, double 0x7FF8...); input payloads are dropped.
std::uint16_t float_to_fp16_bits(float x);
std::uint16_t float_to_bf16_bits(float x);
// From double directly, with a single rounding (not via float, which could round twice).
std::uint16_t double_to_fp16_bits(double x);
std::uint16_t double_to_bf16_bits(double x);
std::uint32_t double_to_fp32_bits(double x);

// The conversions on bit patterns, integer arithmetic only (core/float_format.h). Inline: tensors
// convert every element through them.
namespace detail {
constexpr FloatFormat format_of(DType t) {
  return t == DType::fp16 ? kFp16Format : t == DType::bf16 ? kBf16Format : kFp32Format;
}

// Rounds x to the format once (RNE), from the double's own bits, and returns the format's bits.
// NaN becomes the canonical quiet NaN (quiet bit only, payload dropped) with x's sign.
inline std::uint64_t round_double_to_format(double x, FloatFormat f) {
  return round_bits_to(std::bit_cast<std::uint64_t>(x), kFp64Format, f);
}

// Exact value of a format's bit pattern, built as double bits (every format here fits exactly).
inline double format_bits_to_double(std::uint64_t bits, FloatFormat f) {
  const std::uint64_t sign = ((bits >> (f.width() - 1)) & 1) << 63;
  const int e = static_cast<int>((bits >> f.fraction_bits) & ((1u << f.exponent_bits) - 1));
  std::uint64_t frac = bits & ((1ull << f.fraction_bits) - 1);
  const int bias = f.bias();
  if (e == (1 << f.exponent_bits) - 1) {  // inf, or canonical quiet NaN keeping the sign
    return std::bit_cast<double>(sign | (0x7FFull << 52) | (frac != 0 ? 1ull << 51 : 0));
  }
  if (e == 0 && frac == 0) return std::bit_cast<double>(sign);
  int unbiased = e - bias;
  if (e == 0) {  // subnormal: normalise so the leading 1 becomes the hidden bit
    const int lead = static_cast<int>(std::bit_width(frac)) - 1;
    unbiased = 1 - bias - (f.fraction_bits - lead);
    frac = (frac << (f.fraction_bits - lead)) & ((1ull << f.fraction_bits) - 1);
  }
  const auto dexp = static_cast<std::uint64_t>(unbiased + 1023);
  return std::bit_cast<double>(sign | (dexp << 52) | (frac << (52 - f.fraction_bits)));
}

}  // namespace detail

// Bits of a value of type t (fp32: the float's 32 bits; fp16/bf16 in the low 16 bits).
// Correctly rounded from double.
inline std::uint32_t to_bits(DType t, double x) {
  return static_cast<std::uint32_t>(detail::round_double_to_format(x, detail::format_of(t)));
}
// Exact.
inline double from_bits(DType t, std::uint32_t bits) {
  return t == DType::fp32 ? detail::format_bits_to_double(bits, kFp32Format)
                          : detail::format_bits_to_double(bits & 0xFFFFu, detail::format_of(t));
}

// fn(tag) with tag a std::integral_constant holding t, so that per-element loops written in fn see
// the dtype as a compile-time constant (from_bits(tag, bits) then inlines to fixed shifts).
template <DType T>
using DTypeTag = std::integral_constant<DType, T>;
template <class Fn>
decltype(auto) with_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::fp16: return fn(DTypeTag<DType::fp16>{});
    case DType::bf16: return fn(DTypeTag<DType::bf16>{});
    default: return fn(DTypeTag<DType::fp32>{});
  }
}

// Round a double to the nearest value of type t (one rounding), returned as a double.
inline double round_to(DType t, double x) { return from_bits(t, to_bits(t, x)); }

// Ordered index of a bit pattern: consecutive representable values have consecutive indices, and
// +0 and -0 share index 0. Used for distances in ULPs. Undefined for NaN (callers check first).
std::int64_t ordered_index(DType t, std::uint32_t bits);

// Unit roundoff u = 2^-p, p the precision with the hidden bit (fp16 11, bf16 8, fp32 24).
double unit_roundoff(DType t);

}  // namespace flashproof
