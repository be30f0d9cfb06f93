// Element types of flashproof problems and their IEEE-754 rounding.
// fp16 (binary16) and bf16 (bfloat16) are held as raw bit patterns; every conversion rounds to
// nearest, ties to even, keeps signed zero, produces subnormals, and maps overflow to inf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashproof {

enum class DType { fp16, bf16, fp32 };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);  // "fp16", "bf16", "fp32"
int dtype_bytes(DType t);                                  // 2, 2, 4
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

// Bits of a value of type t (fp32: the float's 32 bits; fp16/bf16 in the low 16 bits).
std::uint32_t to_bits(DType t, double x);     // correctly rounded from double
double from_bits(DType t, std::uint32_t bits);  // exact

// Round a double to the nearest value of type t (one rounding), returned as a double.
double round_to(DType t, double x);

// Ordered index of a bit pattern: consecutive representable values have consecutive indices, and
// +0 and -0 share index 0. Used for distances in ULPs. Undefined for NaN (callers check first).
std::int64_t ordered_index(DType t, std::uint32_t bits);

// Unit roundoff u = 2^-p, p the precision with the hidden bit (fp16 11, bf16 8, fp32 24).
double unit_roundoff(DType t);

}  // namespace flashproof
