// IEEE-754 conversions between double/float and fp16, bf16, fp32, done on the bit patterns with
// integer arithmetic only, so the results do not depend on the FPU, its rounding mode or x87.
#include "core/dtype.h"

#include <bit>

namespace flashproof {
namespace {

using detail::format_of;
using detail::round_double_to_format;
using detail::format_bits_to_double;

// Widened values are exact floats, so "rounding" them to fp32 is exact and also gives NaN one
// canonical bit pattern on every platform.
float exact_to_float(double d) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(round_double_to_format(d, kFp32Format)));
}

}  // namespace

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp32: return "fp32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "fp16" || name == "float16" || name == "half") return DType::fp16;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "fp32" || name == "float32") return DType::fp32;
  return std::nullopt;
}

int dtype_mantissa_bits(DType t) { return format_of(t).fraction_bits; }

float fp16_bits_to_float(std::uint16_t bits) {
  return exact_to_float(format_bits_to_double(bits, kFp16Format));
}
// bf16 is the top half of fp32, so widening is a shift (NaN made canonical like everywhere else).
float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  const bool nan = (w & 0x7FFFFFFFu) > 0x7F800000u;
  return std::bit_cast<float>(nan ? (w & 0x80000000u) | 0x7FC00000u : w);
}

// float -> double is exact, so these still round once.
std::uint16_t float_to_fp16_bits(float x) { return double_to_fp16_bits(x); }
std::uint16_t float_to_bf16_bits(float x) { return double_to_bf16_bits(x); }

std::uint16_t double_to_fp16_bits(double x) {
  return static_cast<std::uint16_t>(round_double_to_format(x, kFp16Format));
}
std::uint16_t double_to_bf16_bits(double x) {
  return static_cast<std::uint16_t>(round_double_to_format(x, kBf16Format));
}
std::uint32_t double_to_fp32_bits(double x) {
  return static_cast<std::uint32_t>(round_double_to_format(x, kFp32Format));
}

std::int64_t ordered_index(DType t, std::uint32_t bits) {
  // Sign-magnitude to two's complement: magnitudes of finite values and inf are consecutive.
  const std::uint32_t sign_bit = t == DType::fp32 ? 0x80000000u : 0x8000u;
  const std::int64_t mag = bits & (sign_bit - 1);
  return (bits & sign_bit) ? -mag : mag;
}

double unit_roundoff(DType t) {
  // 2^-(fraction_bits + 1), built exactly from the exponent field.
  return std::bit_cast<double>(static_cast<std::uint64_t>(1023 - format_of(t).fraction_bits - 1) << 52);
}

}  // namespace flashproof
