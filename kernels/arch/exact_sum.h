// The exact sum of fp32 values and of products of fp16/bf16 values, rounded once to fp32 (round to
// nearest, ties to even): the host model of one output element of mma.sync (kernels/arch/mma.h).
//
// Exactness: every addend is an integer times 2^e with e >= 2 * (bf16's lowest exponent) = -266
// and magnitude below 2^256 (bf16 * bf16; fp32 stays below 2^128), so two 576-bit fixed-point
// magnitudes (of the positive and of the negative addends) with their last bit at 2^-266 hold the
// sum of up to 2^47 addends without rounding. Long double (64-bit significand) is not enough:
// c = 2^100 plus a product of 2^-100 already spans 200 bits, and a sum held to 64 bits and then
// rounded to fp32 can round twice.
//
// Special values follow IEEE-754 addition and multiplication: a NaN operand, inf * 0 or
// (+inf) + (-inf) give NaN; otherwise an infinite operand or product gives that infinity. A finite
// sum beyond fp32's range rounds to inf. An exact zero is -0 only if every addend is -0 (as for
// IEEE sums under round-to-nearest).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "kernels/arch/half_bits.h"

namespace flashproof::arch {

class ExactFp32Sum {
 public:
  void add(const DecodedFloat& x) {
    if (!note_special(x.negative, x.kind)) add_finite(x.negative, x.significand, x.exponent);
  }

  // a * b for 16-bit inputs: the product of two significands of at most 11 bits is exact in 64.
  void add_product(const DecodedFloat& a, const DecodedFloat& b) {
    const bool negative = a.negative != b.negative;
    if (a.kind == FloatKind::nan || b.kind == FloatKind::nan) {
      saw_nan_ = true;
    } else if (a.kind == FloatKind::infinite || b.kind == FloatKind::infinite) {
      const bool other_is_zero = (a.kind == FloatKind::finite && a.significand == 0) ||
                                 (b.kind == FloatKind::finite && b.significand == 0);
      if (other_is_zero)
        saw_nan_ = true;
      else
        note_special(negative, FloatKind::infinite);
    } else {
      add_finite(negative, std::uint64_t{a.significand} * b.significand, a.exponent + b.exponent);
    }
  }

  float round_to_fp32() const {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (saw_nan_ || (saw_pos_inf_ && saw_neg_inf_)) return std::numeric_limits<float>::quiet_NaN();
    if (saw_pos_inf_) return kInf;
    if (saw_neg_inf_) return -kInf;
    const bool negative = less(positive_, negative_);
    const Limbs magnitude = negative ? difference(negative_, positive_) : difference(positive_, negative_);
    const int top = highest_set_bit(magnitude);
    if (top < 0) return all_negative_zero_ ? -0.0f : 0.0f;
    const float rounded = round_magnitude(magnitude, top);
    return negative ? -rounded : rounded;
  }

 private:
  static constexpr int kLimbs = 9;  // 576 bits, bit 0 weighing 2^kLsbExponent
  static constexpr int kLsbExponent = 2 * min_exponent(kBf16Format);
  static constexpr int kMaxAddendBits = 262 - kLsbExponent;  // addends below 2^262
  using Limbs = std::array<std::uint64_t, kLimbs>;

  // Returns whether x was NaN or infinite (and so is not added to the finite sum).
  bool note_special(bool negative, FloatKind kind) {
    if (kind == FloatKind::finite) return false;
    all_negative_zero_ = false;
    if (kind == FloatKind::nan)
      saw_nan_ = true;
    else
      (negative ? saw_neg_inf_ : saw_pos_inf_) = true;
    return true;
  }

  // Positive and negative addends go to separate magnitudes, subtracted once at the end: adding to
  // a magnitude only carries on a limb overflow, where a signed accumulator would carry through
  // every limb each time the sum changes sign.
  void add_finite(bool negative, std::uint64_t significand, int exponent) {
    if (!(negative && significand == 0)) all_negative_zero_ = false;
    if (significand == 0) return;
    const int shift = exponent - kLsbExponent;
    if (shift < 0 || shift + static_cast<int>(std::bit_width(significand)) > kMaxAddendBits)
      throw std::out_of_range("ExactFp32Sum: addend outside the exact range");
    const int limb = shift / 64, bit = shift % 64;
    const std::uint64_t low = significand << bit;
    const std::uint64_t high = bit == 0 ? 0 : significand >> (64 - bit);
    Limbs& target = negative ? negative_ : positive_;
    std::uint64_t carry = add_with_carry(target[limb], low, 0);
    if (limb + 1 < kLimbs) carry = add_with_carry(target[limb + 1], high, carry);
    for (int i = limb + 2; carry != 0 && i < kLimbs; ++i) carry = add_with_carry(target[i], 0, carry);
  }

  static std::uint64_t add_with_carry(std::uint64_t& limb, std::uint64_t addend, std::uint64_t carry) {
    const std::uint64_t sum = limb + addend;
    const std::uint64_t result = sum + carry;
    limb = result;
    return (sum < addend ? 1 : 0) + (result < sum ? 1 : 0);
  }

  static bool less(const Limbs& a, const Limbs& b) {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (a[i] != b[i]) return a[i] < b[i];
    return false;
  }

  // a - b for a >= b.
  static Limbs difference(const Limbs& a, const Limbs& b) {
    Limbs result;
    std::uint64_t borrow = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t partial = a[i] - b[i];
      result[i] = partial - borrow;
      borrow = (a[i] < b[i] ? 1 : 0) + (partial < borrow ? 1 : 0);
    }
    return result;
  }

  static int highest_set_bit(const Limbs& limbs) {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (limbs[i] != 0) return 64 * i + 63 - std::countl_zero(limbs[i]);
    return -1;
  }

  // The 64 bits starting at bit `index` (bits past the top read as 0).
  static std::uint64_t bits_from(const Limbs& limbs, int index) {
    const int limb = index / 64, shift = index % 64;
    std::uint64_t bits = limbs[limb] >> shift;
    if (shift != 0 && limb + 1 < kLimbs) bits |= limbs[limb + 1] << (64 - shift);
    return bits;
  }

  static bool any_bit_below(const Limbs& limbs, int index) {
    for (int i = 0; i < index / 64; ++i)
      if (limbs[i] != 0) return true;
    const int rest = index % 64;
    return rest != 0 && (limbs[index / 64] & ((std::uint64_t{1} << rest) - 1)) != 0;
  }

  // Keeps the bits from the fp32 ulp of the value upwards (at most 24 of them), then rounds to
  // nearest even on the bits below; ldexp of the result is exact or overflows to inf, as it should.
  static float round_magnitude(const Limbs& limbs, int top) {
    constexpr int kFp32Precision = 24;
    const int value_exponent = top + kLsbExponent;
    const int ulp_exponent = std::max(value_exponent - (kFp32Precision - 1), min_exponent(kFp32Format));
    const int drop = ulp_exponent - kLsbExponent;  // > 0: kLsbExponent is below fp32's last bit
    auto kept = static_cast<std::uint32_t>(bits_from(limbs, drop));  // at most 24 bits: none above top
    const bool half = (bits_from(limbs, drop - 1) & 1u) != 0;
    if (half && (any_bit_below(limbs, drop - 1) || (kept & 1u) != 0)) ++kept;
    return std::ldexp(static_cast<float>(kept), ulp_exponent);
  }

  Limbs positive_{};
  Limbs negative_{};
  bool saw_nan_ = false;
  bool saw_pos_inf_ = false;
  bool saw_neg_inf_ = false;
  bool all_negative_zero_ = true;
};

}  // namespace flashproof::arch
