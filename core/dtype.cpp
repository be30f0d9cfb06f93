// IEEE-754 conversions between double/float and fp16, bf16, fp32, done on the bit patterns with
// integer arithmetic only, so the results do not depend on the FPU, its rounding mode or x87.
#include "core/dtype.h"

#include <bit>

namespace flashproof {
namespace {

// A binary interchange-style format: 1 sign bit, exp_bits exponent bits, mant_bits fraction bits.
struct Format {
  int exp_bits;
  int mant_bits;
};
constexpr Format kFp16{5, 10};
constexpr Format kBf16{8, 7};
constexpr Format kFp32{8, 23};

constexpr Format format_of(DType t) {
  return t == DType::fp16 ? kFp16 : t == DType::bf16 ? kBf16 : kFp32;
}

constexpr std::uint64_t kDoubleFrac = (1ull << 52) - 1;

// Rounds x to the format once (RNE), from the double's own bits, and returns the format's bits.
// NaN becomes the canonical quiet NaN (quiet bit only, payload dropped) with x's sign.
std::uint64_t round_double_to_format(double x, Format f) {
  const auto u = std::bit_cast<std::uint64_t>(x);
  const std::uint64_t sign = (u >> 63) << (f.exp_bits + f.mant_bits);
  const int e = static_cast<int>((u >> 52) & 0x7FF);
  const std::uint64_t frac = u & kDoubleFrac;
  const std::uint64_t exp_all_ones = ((1ull << f.exp_bits) - 1) << f.mant_bits;
  if (e == 0x7FF) {
    return sign | exp_all_ones | (frac != 0 ? 1ull << (f.mant_bits - 1) : 0);
  }
  // x = sig * 2^(unbiased - 52), sig with its hidden bit (double subnormals: e = 0, no hidden bit).
  const std::uint64_t sig = e == 0 ? frac : frac | (1ull << 52);
  const int unbiased = e == 0 ? -1022 : e - 1023;
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int biased = unbiased + bias;
  if (biased >= (1 << f.exp_bits) - 1) return sign | exp_all_ones;  // >= 2^(emax+1): inf
  // Below the normal range the target exponent stays at emin (field 1) and extra bits are dropped,
  // which yields the subnormal fraction; a carry out of it lands in the exponent field correctly.
  const int field = biased < 1 ? 1 : biased;
  const int shift = 52 - f.mant_bits + (field - biased);
  // Below half the min subnormal everything rounds to zero (this also keeps the shifts < 64).
  if (shift > 53) return sign;
  std::uint64_t q = sig >> shift;
  const std::uint64_t rem = sig & ((1ull << shift) - 1);
  const std::uint64_t half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) ++q;  // ties to even
  // q carries the hidden bit for normals, so adding (field-1) yields the exponent field; a carry
  // out of the fraction bumps the exponent (max finite + carry gives exactly the inf pattern).
  return sign | ((static_cast<std::uint64_t>(field - 1) << f.mant_bits) + q);
}

// Exact value of a format's bit pattern, built as double bits (every format here fits exactly).
double format_bits_to_double(std::uint64_t bits, Format f) {
  const int width = 1 + f.exp_bits + f.mant_bits;
  const std::uint64_t sign = ((bits >> (width - 1)) & 1) << 63;
  const int e = static_cast<int>((bits >> f.mant_bits) & ((1u << f.exp_bits) - 1));
  std::uint64_t frac = bits & ((1ull << f.mant_bits) - 1);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  if (e == (1 << f.exp_bits) - 1) {  // inf, or canonical quiet NaN keeping the sign
    return std::bit_cast<double>(sign | (0x7FFull << 52) | (frac != 0 ? 1ull << 51 : 0));
  }
  if (e == 0 && frac == 0) return std::bit_cast<double>(sign);
  int unbiased = e - bias;
  if (e == 0) {  // subnormal: normalise so the leading 1 becomes the hidden bit
    const int lead = static_cast<int>(std::bit_width(frac)) - 1;
    unbiased = 1 - bias - (f.mant_bits - lead);
    frac = (frac << (f.mant_bits - lead)) & ((1ull << f.mant_bits) - 1);
  }
  const auto dexp = static_cast<std::uint64_t>(unbiased + 1023);
  return std::bit_cast<double>(sign | (dexp << 52) | (frac << (52 - f.mant_bits)));
}

// Widened values are exact floats, so "rounding" them to fp32 is exact and also gives NaN one
// canonical bit pattern on every platform.
float exact_to_float(double d) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(round_double_to_format(d, kFp32)));
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

int dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }
int dtype_mantissa_bits(DType t) { return format_of(t).mant_bits; }

float fp16_bits_to_float(std::uint16_t bits) {
  return exact_to_float(format_bits_to_double(bits, kFp16));
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
  return static_cast<std::uint16_t>(round_double_to_format(x, kFp16));
}
std::uint16_t double_to_bf16_bits(double x) {
  return static_cast<std::uint16_t>(round_double_to_format(x, kBf16));
}
std::uint32_t double_to_fp32_bits(double x) {
  return static_cast<std::uint32_t>(round_double_to_format(x, kFp32));
}

std::uint32_t to_bits(DType t, double x) {
  return static_cast<std::uint32_t>(round_double_to_format(x, format_of(t)));
}

double from_bits(DType t, std::uint32_t bits) {
  return t == DType::fp32 ? format_bits_to_double(bits, kFp32)
                          : format_bits_to_double(bits & 0xFFFFu, format_of(t));
}

double round_to(DType t, double x) { return from_bits(t, to_bits(t, x)); }

std::int64_t ordered_index(DType t, std::uint32_t bits) {
  // Sign-magnitude to two's complement: magnitudes of finite values and inf are consecutive.
  const std::uint32_t sign_bit = t == DType::fp32 ? 0x80000000u : 0x8000u;
  const std::int64_t mag = bits & (sign_bit - 1);
  return (bits & sign_bit) ? -mag : mag;
}

double unit_roundoff(DType t) {
  // 2^-(mant_bits + 1), built exactly from the exponent field.
  return std::bit_cast<double>(static_cast<std::uint64_t>(1023 - format_of(t).mant_bits - 1) << 52);
}

}  // namespace flashproof
