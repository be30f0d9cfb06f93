// Exhaustive tests of core/dtype: every fp16 and bf16 bit pattern, every adjacent pair's midpoint,
// and millions of float/double samples, checked against oracles that share no code with the
// implementation: values from std::ldexp on the fields, a nearest-value search over the sorted
// table of all representable values, the hardware float cast, and (when the CUDA toolkit headers
// are present) the host conversion functions of cuda_fp16.h / cuda_bf16.h.
#include "core/dtype.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#if FLASHPROOF_HAVE_CUDA_HEADERS
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace flashproof {
namespace {

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559);

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();

std::uint32_t fbits(float x) { return std::bit_cast<std::uint32_t>(x); }
float bits_f(std::uint32_t b) { return std::bit_cast<float>(b); }
double bits_d(std::uint64_t b) { return std::bit_cast<double>(b); }

// Deterministic 64-bit generator (splitmix64).
struct SplitMix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// A 16-bit format under test with its independent oracles.
struct Fmt16 {
  DType t;
  int exp_bits, mant_bits;
  float (*widen)(std::uint16_t);
  std::uint16_t (*narrow_f)(float);
  std::uint16_t (*narrow_d)(double);

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  std::uint16_t sign_bit() const { return 0x8000; }
  std::uint16_t inf_bits() const { return static_cast<std::uint16_t>(((1u << exp_bits) - 1) << mant_bits); }
  std::uint16_t qnan_bits() const { return static_cast<std::uint16_t>(inf_bits() | (1u << (mant_bits - 1))); }
  bool is_nan(std::uint16_t b) const { return (b & 0x7FFF) > inf_bits(); }
  bool is_inf(std::uint16_t b) const { return (b & 0x7FFF) == inf_bits(); }

  // Oracle 1: exact value from the fields with std::ldexp (no bit reinterpretation).
  double ldexp_value(std::uint16_t b) const {
    const int s = b >> 15;
    const int e = (b >> mant_bits) & ((1 << exp_bits) - 1);
    const int m = b & ((1 << mant_bits) - 1);
    double v;
    if (e == (1 << exp_bits) - 1) {
      v = m == 0 ? kInf : std::numeric_limits<double>::quiet_NaN();
    } else if (e == 0) {
      v = std::ldexp(static_cast<double>(m), 1 - bias() - mant_bits);
    } else {
      v = std::ldexp(static_cast<double>(m + (1 << mant_bits)), e - bias() - mant_bits);
    }
    return s ? -v : v;
  }
  // 2^(emax+1): where inf would sit if the exponent range went on (its fraction would be even).
  double overflow_value() const { return std::ldexp(1.0, bias() + 1); }
};

float fp16_widen(std::uint16_t b) { return fp16_bits_to_float(b); }
float bf16_widen(std::uint16_t b) { return bf16_bits_to_float(b); }
std::uint16_t fp16_nf(float x) { return float_to_fp16_bits(x); }
std::uint16_t bf16_nf(float x) { return float_to_bf16_bits(x); }
std::uint16_t fp16_nd(double x) { return double_to_fp16_bits(x); }
std::uint16_t bf16_nd(double x) { return double_to_bf16_bits(x); }

const Fmt16 kFp16{DType::fp16, 5, 10, fp16_widen, fp16_nf, fp16_nd};
const Fmt16 kBf16{DType::bf16, 8, 7, bf16_widen, bf16_nf, bf16_nd};

// Oracle 2: nearest representable value by binary search over all non-negative finite values
// sorted by their ldexp value, ties to the candidate with an even last bit, and 2^(emax+1)
// standing in (with even fraction) for inf, as IEEE 754 overflow rounding prescribes.
class NearestOracle {
 public:
  explicit NearestOracle(const Fmt16& f) : f_(f) {
    for (std::uint32_t b = 0; b < 0x8000; ++b) {
      const auto p = static_cast<std::uint16_t>(b);
      if (!f.is_nan(p) && !f.is_inf(p)) table_.push_back({f.ldexp_value(p), p});
    }
    std::sort(table_.begin(), table_.end());
    table_.push_back({f.overflow_value(), f.inf_bits()});
  }
  // Adjacent values (by value, not by bits), the last one being the overflow stand-in.
  const std::vector<std::pair<double, std::uint16_t>>& table() const { return table_; }

  std::uint16_t operator()(double x) const {
    if (std::isnan(x)) return static_cast<std::uint16_t>((std::signbit(x) ? 0x8000 : 0) | f_.qnan_bits());
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(x);
    if (a >= table_.back().first) return sign | f_.inf_bits();
    auto hi = std::upper_bound(table_.begin(), table_.end(), std::make_pair(a, std::uint16_t{0xFFFF}));
    auto lo = hi - 1;
    if (lo->first == a) return sign | lo->second;
    // Both differences are exact (Sterbenz: neighbours within a factor 2), or clearly ordered.
    const double dl = a - lo->first, dh = hi->first - a;
    const bool hi_even = hi->second == f_.inf_bits() || (hi->second & 1) == 0;
    const bool take_hi = dh < dl || (dh == dl && hi_even);
    return sign | (take_hi ? hi->second : lo->second);
  }

 private:
  const Fmt16& f_;
  std::vector<std::pair<double, std::uint16_t>> table_;
};

const NearestOracle& oracle(const Fmt16& f) {
  static const NearestOracle fp16(kFp16), bf16(kBf16);
  return f.t == DType::fp16 ? fp16 : bf16;
}

// Same value and same sign of zero (NaN compared separately).
bool same_value(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

// A few million float bit patterns: every 1021st pattern over all 2^32, plus the 17 floats around
// every midpoint between adjacent values of f (where rounding decisions are made), both signs.
void for_each_sample_float(const Fmt16& f, const std::function<void(float)>& fn) {
  for (std::uint64_t b = 0; b < (1ull << 32); b += 1021) fn(bits_f(static_cast<std::uint32_t>(b)));
  const auto& t = oracle(f).table();
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const auto mid = static_cast<float>((t[i].first + t[i + 1].first) / 2);
    for (int d = -8; d <= 8; ++d) {
      const std::uint32_t mb = fbits(mid) + static_cast<std::uint32_t>(d);
      fn(bits_f(mb));
      fn(bits_f(mb ^ 0x80000000u));
    }
  }
}

// Doubles around the format's range: random fractions with exponents from below half the minimum
// subnormal to beyond overflow, plus fully random bit patterns.
void for_each_sample_double(const Fmt16& f, int count, const std::function<void(double)>& fn) {
  SplitMix rng{0x5EEDull + static_cast<std::uint64_t>(f.exp_bits)};
  const int lo = 1 - f.bias() - f.mant_bits - 3, hi = f.bias() + 3;
  for (int i = 0; i < count; ++i) {
    const std::uint64_t r = rng.next();
    const int e = lo + static_cast<int>(rng.next() % static_cast<std::uint64_t>(hi - lo + 1));
    const std::uint64_t biased = static_cast<std::uint64_t>(e + 1023);
    fn(bits_d((r & 0x800FFFFFFFFFFFFFull) | (biased << 52)));
    fn(bits_d(rng.next()));
  }
}

// ---------------------------------------------------------------------------------------------
// Names, sizes, precision.

TEST(DTypeNames, NameParseRoundTripAndAliases) {
  for (DType t : {DType::fp16, DType::bf16, DType::fp32}) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_EQ(dtype_name(DType::fp16), "fp16");
  EXPECT_EQ(dtype_name(DType::bf16), "bf16");
  EXPECT_EQ(dtype_name(DType::fp32), "fp32");
  EXPECT_EQ(parse_dtype("float16"), DType::fp16);
  EXPECT_EQ(parse_dtype("half"), DType::fp16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("float32"), DType::fp32);
}

TEST(DTypeNames, ParseRejectsUnknownNames) {
  for (const char* s : {"", "fp8", "fp64", "float64", "double", "int8", "bf", "f16", "fp16 ", " fp16",
                        "fp16x", "bfloat", "tf32", "fp 16"}) {
    EXPECT_FALSE(parse_dtype(s).has_value()) << '"' << s << '"';
  }
}

TEST(DTypeNames, SizesPrecisionAndUnitRoundoff) {
  EXPECT_EQ(dtype_bytes(DType::fp16), 2);
  EXPECT_EQ(dtype_bytes(DType::bf16), 2);
  EXPECT_EQ(dtype_bytes(DType::fp32), 4);
  EXPECT_EQ(dtype_mantissa_bits(DType::fp16), 10);
  EXPECT_EQ(dtype_mantissa_bits(DType::bf16), 7);
  EXPECT_EQ(dtype_mantissa_bits(DType::fp32), 23);
  EXPECT_EQ(unit_roundoff(DType::fp16), std::ldexp(1.0, -11));
  EXPECT_EQ(unit_roundoff(DType::bf16), std::ldexp(1.0, -8));
  EXPECT_EQ(unit_roundoff(DType::fp32), std::ldexp(1.0, -24));
  for (DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    // u is half the spacing above 1: 1+u is a tie (to even: 1), anything above goes up to 1+2u.
    const double u = unit_roundoff(t);
    EXPECT_EQ(round_to(t, 1 + u), 1.0) << dtype_name(t);
    EXPECT_EQ(round_to(t, std::nextafter(1 + u, 2.0)), 1 + 2 * u) << dtype_name(t);
    EXPECT_EQ(round_to(t, 1 + 3 * u), 1 + 4 * u) << dtype_name(t);  // tie between 1+2u, 1+4u: even
  }
}

// ---------------------------------------------------------------------------------------------
// Widening: every 16-bit pattern.

void check_widen_all(const Fmt16& f) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto p = static_cast<std::uint16_t>(b);
    const float w = f.widen(p);
    const double d = from_bits(f.t, b);
    if (f.is_nan(p)) {
      ASSERT_TRUE(std::isnan(w)) << std::hex << b;
      ASSERT_TRUE(std::isnan(d)) << std::hex << b;
      // Quiet, sign kept, canonical (payload dropped, as documented).
      ASSERT_EQ(fbits(w), (b & 0x8000 ? 0x80000000u : 0u) | 0x7FC00000u) << std::hex << b;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(d), (b & 0x8000 ? 1ull << 63 : 0) | 0x7FF8000000000000ull)
          << std::hex << b;
      continue;
    }
    const double v = f.ldexp_value(p);
    ASSERT_TRUE(same_value(w, v)) << std::hex << b << ' ' << w << ' ' << v;
    ASSERT_TRUE(same_value(d, v)) << std::hex << b;
    // Upper bits of from_bits' argument are ignored for 16-bit types.
    ASSERT_TRUE(same_value(from_bits(f.t, b | 0xABCD0000u), v)) << std::hex << b;
  }
}

TEST(DTypeWiden, Fp16AllPatternsExactVsLdexp) { check_widen_all(kFp16); }
TEST(DTypeWiden, Bf16AllPatternsExactVsLdexp) {
  check_widen_all(kBf16);
  for (std::uint32_t b = 0; b < 0x10000; ++b) {  // bf16 is the top half of an fp32
    const auto p = static_cast<std::uint16_t>(b);
    if (!kBf16.is_nan(p)) {
      ASSERT_EQ(fbits(bf16_bits_to_float(p)), b << 16);
    }
  }
}

TEST(DTypeWiden, Fp32FromBitsIsExact) {
  for (std::uint64_t b = 0; b < (1ull << 32); b += 65537) {
    const float x = bits_f(static_cast<std::uint32_t>(b));
    const double d = from_bits(DType::fp32, static_cast<std::uint32_t>(b));
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(d));
    } else {
      ASSERT_TRUE(same_value(d, x)) << std::hex << b;
      ASSERT_EQ(to_bits(DType::fp32, d), b);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Narrowing.

void check_round_trip_all(const Fmt16& f) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto p = static_cast<std::uint16_t>(b);
    if (f.is_nan(p)) continue;
    const float w = f.widen(p);
    ASSERT_EQ(f.narrow_f(w), p) << std::hex << b;
    ASSERT_EQ(f.narrow_d(w), p) << std::hex << b;
    ASSERT_EQ(to_bits(f.t, from_bits(f.t, b)), b) << std::hex << b;
    ASSERT_TRUE(same_value(round_to(f.t, w), w)) << std::hex << b;
    ASSERT_EQ(oracle(f)(w), p) << std::hex << b;  // the oracle agrees on exact values too
  }
}

TEST(DTypeNarrow, Fp16RoundTripAllPatterns) { check_round_trip_all(kFp16); }
TEST(DTypeNarrow, Bf16RoundTripAllPatterns) { check_round_trip_all(kBf16); }

// For every adjacent pair (a, b) of non-negative values, including (max finite, overflow), and
// both signs: the exact midpoint ties to even, one float or double ulp either side goes to the
// nearer neighbour, and quarter points too. Expectations are spelt out and checked against the
// search oracle as well.
void check_midpoints(const Fmt16& f) {
  const auto& t = oracle(f).table();
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    const auto [a, pa] = t[i];
    const auto [b, pb] = t[i + 1];
    const double mid = (a + b) / 2;
    ASSERT_EQ(static_cast<double>(static_cast<float>(mid)), mid);  // midpoints are floats
    const bool b_even = pb == f.inf_bits() || (pb & 1) == 0;
    ASSERT_NE(b_even, (pa & 1) == 0) << "adjacent values have opposite parity";
    const std::uint16_t pm = b_even ? pb : pa;
    const auto midf = static_cast<float>(mid);
    for (const std::uint16_t s : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
      const double sg = s ? -1.0 : 1.0;
      struct Case {
        double x;
        std::uint16_t want;
      };
      const Case cases[] = {
          {a, pa},
          {mid, pm},
          {std::nextafter(mid, kInf), pb},
          {std::nextafter(mid, 0.0), pa},
          {std::nextafterf(midf, kInfF), pb},
          {std::nextafterf(midf, 0.0f), pa},
          {a + (b - a) / 4, pa},
          {a + 3 * (b - a) / 4, pb},
      };
      for (const Case& c : cases) {
        const double x = sg * c.x;
        const std::uint16_t want = s | c.want;
        ASSERT_EQ(f.narrow_d(x), want) << std::hex << pa << ' ' << pb << ' ' << x;
        ASSERT_EQ(to_bits(f.t, x), want) << x;
        ASSERT_EQ(oracle(f)(x), want) << x;
        if (static_cast<double>(static_cast<float>(x)) == x) {
          ASSERT_EQ(f.narrow_f(static_cast<float>(x)), want) << std::hex << pa << ' ' << pb << ' ' << x;
        }
      }
    }
  }
}

TEST(DTypeNarrow, Fp16EveryMidpointTiesToEven) { check_midpoints(kFp16); }
TEST(DTypeNarrow, Bf16EveryMidpointTiesToEven) { check_midpoints(kBf16); }

TEST(DTypeNarrow, DoubleIsRoundedOnceNotViaFloat) {
  // fp16: 1 + 2^-11 is the midpoint of 1 (even) and 1 + 2^-10. Just above it by 2^-40 the correct
  // answer is 1 + 2^-10, but rounding to float first lands exactly on the midpoint, then on 1.
  const double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_fp16_bits(x), 0x3C01);
  EXPECT_EQ(float_to_fp16_bits(static_cast<float>(x)), 0x3C00);  // the naive path double-rounds
  EXPECT_EQ(double_to_fp16_bits(-x), 0xBC01);
  // bf16: same with the midpoint 1 + 2^-8 of 1 and 1 + 2^-7.
  const double y = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_bf16_bits(y), 0x3F81);
  EXPECT_EQ(float_to_bf16_bits(static_cast<float>(y)), 0x3F80);
  EXPECT_EQ(to_bits(DType::bf16, y), 0x3F81u);
  EXPECT_EQ(round_to(DType::fp16, x), 1.0 + std::ldexp(1.0, -10));

  // Every midpoint whose lower neighbour is even is such a counterexample one double ulp above.
  for (const Fmt16* f : {&kFp16, &kBf16}) {
    int counterexamples = 0;
    const auto& t = oracle(*f).table();
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      const double up = std::nextafter((t[i].first + t[i + 1].first) / 2, kInf);
      ASSERT_EQ(f->narrow_d(up), t[i + 1].second);
      if (f->narrow_f(static_cast<float>(up)) != t[i + 1].second) ++counterexamples;
    }
    EXPECT_GT(counterexamples, 10000) << dtype_name(f->t);
  }
}

TEST(DTypeNarrow, OverflowThresholds) {
  // fp16: max 65504, spacing 32 there; 65520 is the midpoint to 2^16 and rounds to inf.
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16_bits(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16_bits(std::nextafterf(65520.0f, 0.0f)), 0x7BFF);
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(-65520.0f), 0xFC00);
  EXPECT_EQ(double_to_fp16_bits(std::nextafter(65520.0, 0.0)), 0x7BFF);
  EXPECT_EQ(double_to_fp16_bits(-std::nextafter(65520.0, 0.0)), 0xFBFF);
  EXPECT_EQ(double_to_fp16_bits(65520.0), 0x7C00);
  EXPECT_EQ(double_to_fp16_bits(65536.0), 0x7C00);
  EXPECT_EQ(double_to_fp16_bits(1e300), 0x7C00);
  EXPECT_EQ(double_to_fp16_bits(std::numeric_limits<double>::max()), 0x7C00);
  EXPECT_EQ(double_to_fp16_bits(-std::numeric_limits<double>::max()), 0xFC00);
  EXPECT_EQ(float_to_fp16_bits(std::numeric_limits<float>::max()), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(kInfF), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(-kInfF), 0xFC00);
  EXPECT_EQ(double_to_fp16_bits(-kInf), 0xFC00);

  // bf16: max (2 - 2^-7) 2^127; the midpoint to 2^128 is (2 - 2^-8) 2^127, a float.
  const double bmax = std::ldexp(255.0, 120), bmid = std::ldexp(511.0, 119);
  EXPECT_EQ(float_to_bf16_bits(static_cast<float>(bmax)), 0x7F7F);
  EXPECT_EQ(float_to_bf16_bits(std::nextafterf(static_cast<float>(bmid), 0.0f)), 0x7F7F);
  EXPECT_EQ(float_to_bf16_bits(static_cast<float>(bmid)), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(-static_cast<float>(bmid)), 0xFF80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(double_to_bf16_bits(std::nextafter(bmid, 0.0)), 0x7F7F);
  EXPECT_EQ(double_to_bf16_bits(bmid), 0x7F80);
  EXPECT_EQ(double_to_bf16_bits(1e300), 0x7F80);
  EXPECT_EQ(double_to_bf16_bits(-1e300), 0xFF80);
  EXPECT_EQ(float_to_bf16_bits(kInfF), 0x7F80);

  // fp32 from double: max (2 - 2^-23) 2^127; midpoint to 2^128 is (2 - 2^-24) 2^127.
  const double fmid = std::ldexp(static_cast<double>((1 << 25) - 1), 103);
  EXPECT_EQ(double_to_fp32_bits(std::numeric_limits<float>::max()), 0x7F7FFFFFu);
  EXPECT_EQ(double_to_fp32_bits(std::nextafter(fmid, 0.0)), 0x7F7FFFFFu);
  EXPECT_EQ(double_to_fp32_bits(fmid), 0x7F800000u);
  EXPECT_EQ(double_to_fp32_bits(-fmid), 0xFF800000u);
  EXPECT_EQ(double_to_fp32_bits(std::ldexp(1.0, 128)), 0x7F800000u);
  EXPECT_EQ(double_to_fp32_bits(std::numeric_limits<double>::max()), 0x7F800000u);
  EXPECT_EQ(double_to_fp32_bits(kInf), 0x7F800000u);
  EXPECT_EQ(double_to_fp32_bits(-kInf), 0xFF800000u);
}

TEST(DTypeNarrow, SignedZeroAndUnderflow) {
  EXPECT_EQ(float_to_fp16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(double_to_fp16_bits(-0.0), 0x8000);
  EXPECT_EQ(double_to_bf16_bits(-0.0), 0x8000);
  EXPECT_EQ(double_to_fp32_bits(0.0), 0u);
  EXPECT_EQ(double_to_fp32_bits(-0.0), 0x80000000u);
  EXPECT_TRUE(std::signbit(round_to(DType::fp16, -0.0)));
  EXPECT_TRUE(std::signbit(from_bits(DType::bf16, 0x8000)));
  // Tiny values underflow to a zero of their own sign, including double subnormals.
  const double dmin = std::numeric_limits<double>::denorm_min();
  for (double x : {dmin, 1e-300, 1e-50, std::ldexp(1.0, -200)}) {
    EXPECT_EQ(double_to_fp16_bits(x), 0x0000) << x;
    EXPECT_EQ(double_to_fp16_bits(-x), 0x8000) << x;
    EXPECT_EQ(double_to_bf16_bits(-x), 0x8000) << x;
    EXPECT_EQ(double_to_fp32_bits(-x), 0x80000000u) << x;
    EXPECT_EQ(double_to_fp32_bits(x), 0u) << x;
  }
  EXPECT_EQ(float_to_fp16_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(DTypeNarrow, Subnormals) {
  // fp16: min subnormal 2^-24, largest subnormal 1023 * 2^-24, min normal 2^-14.
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1.0, -25)), 0x0000);  // half of min: tie to even 0
  EXPECT_EQ(double_to_fp16_bits(-std::ldexp(1.0, -25)), 0x8000);
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(double_to_fp16_bits(std::nextafter(std::ldexp(1.0, -25), 1.0)), 0x0001);
  EXPECT_EQ(float_to_fp16_bits(std::nextafterf(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(3.0, -26)), 0x0001);   // 0.75 min
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1.5, -24)), 0x0002);   // tie 1|2 -> 2
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(2.5, -24)), 0x0002);   // tie 2|3 -> 2
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1023.0, -24)), 0x03FF);
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1023.5, -24)), 0x0400);  // into the min normal
  EXPECT_EQ(float_to_fp16_bits(std::ldexp(1023.5f, -24)), 0x0400);
  EXPECT_EQ(double_to_fp16_bits(std::nextafter(std::ldexp(1023.5, -24), 0.0)), 0x03FF);
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1022.5, -24)), 0x03FE);  // tie 3FE|3FF -> 3FE
  EXPECT_EQ(double_to_fp16_bits(std::ldexp(1.0, -14)), 0x0400);
  EXPECT_EQ(fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_bits_to_float(0x83FF), -std::ldexp(1023.0f, -24));

  // bf16: min subnormal 2^-133, largest subnormal 127 * 2^-133 (all floats, some subnormal).
  EXPECT_EQ(float_to_bf16_bits(std::ldexp(1.0f, -133)), 0x0001);
  EXPECT_EQ(float_to_bf16_bits(std::ldexp(1.0f, -134)), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-std::ldexp(1.0f, -134)), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(std::nextafterf(std::ldexp(1.0f, -134), 1.0f)), 0x0001);
  EXPECT_EQ(float_to_bf16_bits(std::ldexp(1.5f, -133)), 0x0002);
  EXPECT_EQ(float_to_bf16_bits(std::ldexp(127.0f, -133)), 0x007F);
  EXPECT_EQ(float_to_bf16_bits(std::ldexp(127.5f, -133)), 0x0080);
  EXPECT_EQ(float_to_bf16_bits(std::nextafterf(std::ldexp(127.5f, -133), 0.0f)), 0x007F);
  EXPECT_EQ(double_to_bf16_bits(std::nextafter(std::ldexp(1.0, -134), 1.0)), 0x0001);
  EXPECT_EQ(bf16_bits_to_float(0x0001), std::ldexp(1.0f, -133));

  // fp32 from double: min subnormal 2^-149, min normal 2^-126.
  EXPECT_EQ(double_to_fp32_bits(std::ldexp(1.0, -149)), 0x00000001u);
  EXPECT_EQ(double_to_fp32_bits(std::ldexp(1.0, -150)), 0x00000000u);
  EXPECT_EQ(double_to_fp32_bits(-std::ldexp(1.0, -150)), 0x80000000u);
  EXPECT_EQ(double_to_fp32_bits(std::nextafter(std::ldexp(1.0, -150), 1.0)), 0x00000001u);
  EXPECT_EQ(double_to_fp32_bits(std::ldexp(1.5, -149)), 0x00000002u);
  EXPECT_EQ(double_to_fp32_bits(std::ldexp(static_cast<double>((1 << 24) - 1), -150)), 0x00800000u);
  EXPECT_EQ(double_to_fp32_bits(std::ldexp(1.0, -126)), 0x00800000u);
}

TEST(DTypeNarrow, NaNBecomesCanonicalQuietNaNWithSign) {
  const std::uint32_t fnans[] = {0x7FC00000u, 0x7F800001u, 0x7FBFFFFFu, 0x7FFFFFFFu, 0x7FA5A5A5u, 0x7F802000u};
  for (std::uint32_t n : fnans) {
    // 0x7F800001 etc. would truncate to an inf pattern: must stay NaN.
    EXPECT_EQ(float_to_fp16_bits(bits_f(n)), 0x7E00) << std::hex << n;
    EXPECT_EQ(float_to_fp16_bits(bits_f(n | 0x80000000u)), 0xFE00) << std::hex << n;
    EXPECT_EQ(float_to_bf16_bits(bits_f(n)), 0x7FC0) << std::hex << n;
    EXPECT_EQ(float_to_bf16_bits(bits_f(n | 0x80000000u)), 0xFFC0) << std::hex << n;
  }
  const std::uint64_t dnans[] = {0x7FF8000000000000ull, 0x7FF0000000000001ull, 0x7FFFFFFFFFFFFFFFull,
                                 0x7FF0000020000000ull};
  for (std::uint64_t n : dnans) {
    const double x = bits_d(n), y = bits_d(n | (1ull << 63));
    EXPECT_EQ(double_to_fp16_bits(x), 0x7E00) << std::hex << n;
    EXPECT_EQ(double_to_fp16_bits(y), 0xFE00) << std::hex << n;
    EXPECT_EQ(double_to_bf16_bits(x), 0x7FC0) << std::hex << n;
    EXPECT_EQ(double_to_bf16_bits(y), 0xFFC0) << std::hex << n;
    EXPECT_EQ(double_to_fp32_bits(x), 0x7FC00000u) << std::hex << n;
    EXPECT_EQ(double_to_fp32_bits(y), 0xFFC00000u) << std::hex << n;
    EXPECT_TRUE(std::isnan(round_to(DType::fp16, x)));
    EXPECT_TRUE(std::isnan(round_to(DType::fp32, y)));
    EXPECT_TRUE(std::signbit(round_to(DType::bf16, y)));
  }
}

void check_float_sample_vs_oracle(const Fmt16& f) {
  std::size_t n = 0;
  for_each_sample_float(f, [&](float x) {
    ++n;
    const std::uint16_t got = f.narrow_f(x);
    if (std::isnan(x)) {
      ASSERT_EQ(got, (std::signbit(x) ? 0x8000 : 0) | f.qnan_bits());
    } else {
      ASSERT_EQ(got, oracle(f)(x)) << std::hex << fbits(x) << ' ' << x;
      ASSERT_EQ(f.narrow_d(x), got);
    }
  });
  EXPECT_GT(n, 5'000'000u);
}

TEST(DTypeNarrow, Fp16FloatSampleVsNearestOracle) { check_float_sample_vs_oracle(kFp16); }
TEST(DTypeNarrow, Bf16FloatSampleVsNearestOracle) { check_float_sample_vs_oracle(kBf16); }

void check_double_sample_vs_oracle(const Fmt16& f) {
  for_each_sample_double(f, 500'000, [&](double x) {
    if (std::isnan(x)) return;
    ASSERT_EQ(f.narrow_d(x), oracle(f)(x)) << std::hex << std::bit_cast<std::uint64_t>(x) << ' ' << x;
  });
}

TEST(DTypeNarrow, Fp16DoubleSampleVsNearestOracle) { check_double_sample_vs_oracle(kFp16); }
TEST(DTypeNarrow, Bf16DoubleSampleVsNearestOracle) { check_double_sample_vs_oracle(kBf16); }

// IEEE double -> float conversion under the default rounding mode is RNE: the cast is the oracle.
TEST(DTypeNarrow, DoubleToFp32MatchesCast) {
  const auto check = [](double x) {
    const auto got = double_to_fp32_bits(x);
    const float want = static_cast<float>(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(bits_f(got)));
      return;
    }
    ASSERT_EQ(got, fbits(want)) << std::hex << std::bit_cast<std::uint64_t>(x) << ' ' << x;
    ASSERT_EQ(to_bits(DType::fp32, x), got);
    ASSERT_TRUE(same_value(round_to(DType::fp32, x), want));
  };
  // Around every 4099th float: itself, its midpoint with the next float, and +- 1 double ulp.
  for (std::uint64_t b = 0; b < (1ull << 32); b += 4099) {
    const float f = bits_f(static_cast<std::uint32_t>(b));
    if (!std::isfinite(f)) continue;
    const float g = std::nextafterf(f, f < 0 ? -kInfF : kInfF);
    const double mid = std::isfinite(g) ? (static_cast<double>(f) + g) / 2
                                        : (static_cast<double>(f) + std::copysign(std::ldexp(1.0, 128), f)) / 2;
    for (double x : {static_cast<double>(f), mid, std::nextafter(mid, kInf), std::nextafter(mid, -kInf)}) check(x);
  }
  // Random doubles: exponents around the float range, and fully random bit patterns.
  SplitMix rng{42};
  for (int i = 0; i < 1'000'000; ++i) {
    const std::uint64_t e = static_cast<std::uint64_t>(1023 - 155 + static_cast<int>(rng.next() % 286));
    check(bits_d((rng.next() & 0x800FFFFFFFFFFFFFull) | (e << 52)));
    check(bits_d(rng.next()));
  }
}

// ---------------------------------------------------------------------------------------------
// Ordered index.

void check_ordered_index_all(const Fmt16& f) {
  std::vector<std::pair<double, std::uint16_t>> vals;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto p = static_cast<std::uint16_t>(b);
    if (!f.is_nan(p)) vals.push_back({f.ldexp_value(p), p});
  }
  std::sort(vals.begin(), vals.end());  // by value (ldexp oracle), not by bits
  const std::int64_t top = ordered_index(f.t, f.inf_bits());
  EXPECT_EQ(ordered_index(f.t, vals.front().second), -top);
  EXPECT_EQ(ordered_index(f.t, 0x0000), 0);
  EXPECT_EQ(ordered_index(f.t, 0x8000), 0);
  EXPECT_EQ(ordered_index(f.t, f.inf_bits() - 1u) + 1, top);  // inf follows max finite
  for (std::size_t i = 1; i < vals.size(); ++i) {
    const std::int64_t prev = ordered_index(f.t, vals[i - 1].second);
    const std::int64_t cur = ordered_index(f.t, vals[i].second);
    if (vals[i].first == vals[i - 1].first) {
      ASSERT_EQ(cur, prev);  // only +-0
      ASSERT_EQ(cur, 0);
    } else {
      ASSERT_EQ(cur, prev + 1) << std::hex << vals[i - 1].second << ' ' << vals[i].second;
    }
    ASSERT_EQ(ordered_index(f.t, vals[i].second ^ 0x8000u), -cur);
  }
  EXPECT_EQ(ordered_index(f.t, vals.back().second), top);
}

TEST(DTypeOrderedIndex, Fp16AllPatterns) { check_ordered_index_all(kFp16); }
TEST(DTypeOrderedIndex, Bf16AllPatterns) { check_ordered_index_all(kBf16); }

TEST(DTypeOrderedIndex, Fp32Sample) {
  EXPECT_EQ(ordered_index(DType::fp32, 0x80000000u), 0);
  EXPECT_EQ(ordered_index(DType::fp32, 0u), 0);
  EXPECT_EQ(ordered_index(DType::fp32, 0x7F800000u), ordered_index(DType::fp32, 0x7F7FFFFFu) + 1);
  for (std::uint64_t b = 0; b < (1ull << 32); b += 997) {
    const float x = bits_f(static_cast<std::uint32_t>(b));
    if (std::isnan(x) || x == kInfF) continue;
    const float y = std::nextafterf(x, kInfF);  // the next representable value above
    ASSERT_EQ(ordered_index(DType::fp32, fbits(y)), ordered_index(DType::fp32, fbits(x)) + 1) << std::hex << b;
    ASSERT_EQ(ordered_index(DType::fp32, fbits(-x)), -ordered_index(DType::fp32, fbits(x)));
  }
}

// ---------------------------------------------------------------------------------------------
// CUDA host conversions as an independent oracle.

#if FLASHPROOF_HAVE_CUDA_HEADERS

std::uint16_t cuda_f2h(float x) { return static_cast<__half_raw>(__float2half_rn(x)).x; }
std::uint16_t cuda_f2bf(float x) { return static_cast<__nv_bfloat16_raw>(__float2bfloat16_rn(x)).x; }
float cuda_h2f(std::uint16_t b) {
  __half_raw r;
  r.x = b;
  return __half2float(__half(r));
}
float cuda_bf2f(std::uint16_t b) {
  __nv_bfloat16_raw r;
  r.x = b;
  return __bfloat162float(__nv_bfloat16(r));
}

struct CudaOps {
  float (*widen)(std::uint16_t);
  std::uint16_t (*narrow)(float);
};

CudaOps cuda_ops(const Fmt16& f) {
  return f.t == DType::fp16 ? CudaOps{cuda_h2f, cuda_f2h} : CudaOps{cuda_bf2f, cuda_f2bf};
}

void check_cuda_widen_all(const Fmt16& f) {
  const CudaOps ops = cuda_ops(f);
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto p = static_cast<std::uint16_t>(b);
    const float ours = f.widen(p), theirs = ops.widen(p);
    if (f.is_nan(p)) {
      ASSERT_TRUE(std::isnan(theirs) && std::isnan(ours)) << std::hex << b;
    } else {
      ASSERT_EQ(fbits(ours), fbits(theirs)) << std::hex << b;
      ASSERT_EQ(ops.narrow(theirs), p) << std::hex << b;  // CUDA's own round trip, for sanity
    }
  }
}

TEST(DTypeCuda, Fp16WidenAllPatterns) { check_cuda_widen_all(kFp16); }
TEST(DTypeCuda, Bf16WidenAllPatterns) { check_cuda_widen_all(kBf16); }

void check_cuda_float_sample(const Fmt16& f) {
  const CudaOps ops = cuda_ops(f);
  for_each_sample_float(f, [&](float x) {
    const std::uint16_t ours = f.narrow_f(x), theirs = ops.narrow(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(f.is_nan(ours) && f.is_nan(theirs));
    } else {
      ASSERT_EQ(ours, theirs) << std::hex << fbits(x) << ' ' << x;
    }
  });
}

TEST(DTypeCuda, Fp16NarrowFloatSample) { check_cuda_float_sample(kFp16); }
TEST(DTypeCuda, Bf16NarrowFloatSample) { check_cuda_float_sample(kBf16); }

#if CUDART_VERSION >= 12000
// The host __double2half / __double2bfloat16 round once (pre-rounding to odd, checked on CUDA 13).
TEST(DTypeCuda, NarrowDoubleSample) {
  const auto h = [](double x) { return static_cast<__half_raw>(__double2half(x)).x; };
  const auto bf = [](double x) { return static_cast<__nv_bfloat16_raw>(__double2bfloat16(x)).x; };
  const auto cmp = [](std::uint16_t ours, std::uint16_t theirs, double x, const Fmt16& f) {
    if (std::isnan(x)) {
      ASSERT_TRUE(f.is_nan(ours) && f.is_nan(theirs));
    } else {
      ASSERT_EQ(ours, theirs) << std::hex << std::bit_cast<std::uint64_t>(x) << ' ' << x;
    }
  };
  for_each_sample_double(kFp16, 500'000, [&](double x) { cmp(double_to_fp16_bits(x), h(x), x, kFp16); });
  for_each_sample_double(kBf16, 500'000, [&](double x) { cmp(double_to_bf16_bits(x), bf(x), x, kBf16); });
  for (const Fmt16* f : {&kFp16, &kBf16}) {
    const auto& t = oracle(*f).table();
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      const double mid = (t[i].first + t[i + 1].first) / 2;
      for (double x : {mid, std::nextafter(mid, kInf), std::nextafter(mid, 0.0)}) {
        for (double y : {x, -x}) {
          if (f->t == DType::fp16) {
            cmp(double_to_fp16_bits(y), h(y), y, kFp16);
          } else {
            cmp(double_to_bf16_bits(y), bf(y), y, kBf16);
          }
        }
      }
    }
  }
}
#endif  // CUDART_VERSION >= 12000

#endif  // FLASHPROOF_HAVE_CUDA_HEADERS

}  // namespace
}  // namespace flashproof
