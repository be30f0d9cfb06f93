// The warp-level host models of kernels/arch: the mma.sync m16n8k16 and ldmatrix m8n8 fragment
// layouts against entries transcribed by hand from the PTX ISA text, the single-rounding arithmetic
// model against independent references (long double where it is provably exact, MPFR over the full
// range), the host exp2 model against the properties the proofs assume, and mutants the tests must
// reject.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "kernels/arch/convert.h"
#include "kernels/arch/exact_sum.h"
#include "kernels/arch/half_bits.h"
#include "kernels/arch/ldmatrix.h"
#include "kernels/arch/mma.h"
#include "kernels/arch/scalar_math.h"
#include "tests/kernels/transposed_products.h"

namespace flashproof::arch {
namespace {

using LayoutFn = MatrixCoord (*)(int lane, int i);

std::uint32_t pack(std::uint16_t low, std::uint16_t high) { return low | (std::uint32_t{high} << 16); }

// ---------------------------------------------------------------------------------------------
// Hand-transcribed layout entries. Derived from the PTX ISA's formulas for mma.m16n8k16 with
// floating-point types (groupID = lane >> 2, threadID_in_group = lane % 4) and from its ldmatrix
// text, worked out per lane on paper; deliberately not computed by the functions under test.

// Register `reg` of `lane` holds (row, col) in its low half; the high half holds the next element
// along the fragment's pairing direction (A: next column; B: next k row).
struct PairEntry {
  int lane, reg, row, col;
};
constexpr PairEntry kATable[] = {
    {0, 0, 0, 0},  {0, 1, 8, 0},   {0, 2, 0, 8},   {0, 3, 8, 8},    {5, 0, 1, 2},
    {5, 1, 9, 2},  {5, 2, 1, 10},  {5, 3, 9, 10},  {14, 0, 3, 4},   {14, 3, 11, 12},
    {31, 0, 7, 6}, {31, 1, 15, 6}, {31, 2, 7, 14}, {31, 3, 15, 14},
};
// B entries give (k, n) of the low half.
constexpr PairEntry kBTable[] = {
    {0, 0, 0, 0},  {0, 1, 8, 0},   {5, 0, 2, 1},  {5, 1, 10, 1},
    {18, 0, 4, 4}, {18, 1, 12, 4}, {31, 0, 6, 7}, {31, 1, 14, 7},
};
struct ElementEntry {
  int lane, i, row, col;
};
constexpr ElementEntry kCTable[] = {
    {0, 0, 0, 0}, {0, 1, 0, 1},  {0, 2, 8, 0},  {0, 3, 8, 1},   {5, 0, 1, 2},
    {5, 3, 9, 3}, {30, 0, 7, 4}, {30, 1, 7, 5}, {30, 2, 15, 4}, {30, 3, 15, 5},
};
// ldmatrix: element `i` is the half of the register; (row, col) of the stored 8x8 matrix.
constexpr ElementEntry kLdmatrixTable[] = {
    {0, 0, 0, 0}, {0, 1, 0, 1}, {6, 0, 1, 4}, {6, 1, 1, 5}, {31, 0, 7, 6}, {31, 1, 7, 7},
};
constexpr ElementEntry kLdmatrixTransTable[] = {
    {0, 0, 0, 0}, {0, 1, 1, 0}, {6, 0, 4, 1}, {6, 1, 5, 1}, {31, 0, 6, 7}, {31, 1, 7, 7},
};

template <std::size_t N>
int pair_mismatches(const PairEntry (&table)[N], LayoutFn layout, MatrixCoord step) {
  int mismatches = 0;
  for (const PairEntry& e : table) {
    mismatches += layout(e.lane, 2 * e.reg) != MatrixCoord{e.row, e.col};
    mismatches += layout(e.lane, 2 * e.reg + 1) != MatrixCoord{e.row + step.row, e.col + step.col};
  }
  return mismatches;
}

template <std::size_t N>
int element_mismatches(const ElementEntry (&table)[N], LayoutFn layout) {
  int mismatches = 0;
  for (const ElementEntry& e : table) mismatches += layout(e.lane, e.i) != MatrixCoord{e.row, e.col};
  return mismatches;
}

constexpr MatrixCoord kNextCol{0, 1}, kNextRow{1, 0};

MatrixCoord ldmatrix_plain(int lane, int half) { return ldmatrix_element(lane, half, false); }
MatrixCoord ldmatrix_trans(int lane, int half) { return ldmatrix_element(lane, half, true); }

TEST(ArchLayout, MatchesEntriesTranscribedFromThePtxIsa) {
  EXPECT_EQ(pair_mismatches(kATable, mma_a_element, kNextCol), 0);
  EXPECT_EQ(pair_mismatches(kBTable, mma_b_element, kNextRow), 0);
  EXPECT_EQ(element_mismatches(kCTable, mma_c_element), 0);
  EXPECT_EQ(element_mismatches(kLdmatrixTable, ldmatrix_plain), 0);
  EXPECT_EQ(element_mismatches(kLdmatrixTransTable, ldmatrix_trans), 0);
}

TEST(ArchLayout, RejectsSwappedOrTransposedLayouts) {
  // Two elements of one lane exchanged, and a layout that is right up to a transposition.
  constexpr LayoutFn swapped_a = [](int lane, int i) {
    return mma_a_element(lane, lane == 5 && i < 2 ? 1 - i : i);
  };
  constexpr LayoutFn transposed_c = [](int lane, int i) {
    const MatrixCoord at = mma_c_element(lane, i);
    return MatrixCoord{at.col, at.row};
  };
  constexpr LayoutFn ldmatrix_halves_swapped = [](int lane, int half) {
    return ldmatrix_element(lane, 1 - half, false);
  };
  EXPECT_GT(pair_mismatches(kATable, swapped_a, kNextCol), 0);
  EXPECT_GT(element_mismatches(kCTable, transposed_c), 0);
  EXPECT_GT(element_mismatches(kLdmatrixTable, ldmatrix_halves_swapped), 0);
  EXPECT_GT(element_mismatches(kLdmatrixTable, ldmatrix_trans), 0);
}

// Every element of the matrix is held by exactly one (lane, element) pair.
void expect_bijection(LayoutFn layout, int elements_per_lane, int rows, int cols) {
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < elements_per_lane; ++i) {
      const MatrixCoord at = layout(lane, i);
      ASSERT_TRUE(at.row >= 0 && at.row < rows && at.col >= 0 && at.col < cols) << lane << " " << i;
      EXPECT_TRUE(seen.insert({at.row, at.col}).second) << "lane " << lane << " element " << i;
    }
  EXPECT_EQ(static_cast<int>(seen.size()), rows * cols);
}

TEST(ArchLayout, EachLayoutCoversItsMatrixOnce) {
  expect_bijection(mma_a_element, 8, 16, 16);
  expect_bijection(mma_b_element, 4, 16, 8);
  expect_bijection(mma_c_element, 4, 16, 8);
  expect_bijection(ldmatrix_plain, 2, 8, 8);
  expect_bijection(ldmatrix_trans, 2, 8, 8);
}

// ---------------------------------------------------------------------------------------------
// mma at register level, with no layout function involved: per the ISA text, A's register 1 of
// lane 5 is (A[9][2], A[9][3]); a B register holds rows 2t (low) and 2t+1 (high) of column
// groupID; D's row 9 is c2, c3 of lanes 4..7 (groupID 1), and lane 4's c2 is (9, 0).
struct Encodings {
  MmaTag tag;
  std::uint16_t one, two, sixteen;
};

TEST(ArchMma, RegisterLevelExampleFromTheIsaText) {
  for (const Encodings e :
       {Encodings{MmaTag::fp16, 0x3C00, 0x4000, 0x4C00}, Encodings{MmaTag::bf16, 0x3F80, 0x4000, 0x4180}}) {
    MmaA a[32]{};
    MmaB b[32];
    MmaC c[32]{}, d[32];
    a[5].reg[1] = pack(e.one, e.two);                                         // A[9][2] = 1, A[9][3] = 2
    for (MmaB& lane : b) lane.reg[0] = lane.reg[1] = pack(e.one, e.sixteen);  // B[k][n] = k even ? 1 : 16
    c[4].reg[2] = 0.5f;                                                       // C[9][0]
    mma_m16n8k16_warp(e.tag, a, b, c, d);
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < 4; ++i) {
        const bool row9 = lane >= 4 && lane < 8 && i >= 2;
        const float expected = row9 ? 1 * 1 + 2 * 16 + (lane == 4 && i == 2 ? 0.5f : 0.0f) : 0.0f;
        EXPECT_EQ(d[lane].reg[i], expected) << "lane " << lane << " c" << i;
      }
  }
}

// ---------------------------------------------------------------------------------------------
// mma on random matrices against a long double product.
//
// Why exact equality: inputs are drawn with exponents in a narrow band (fp16 values in [2^-4, 2^5),
// bf16 in [2^-8, 2^9), C likewise), so every product and C is an integer multiple of 2^-31 and
// every partial sum is below 2^23 in magnitude: at most 54 significant bits, which long double's 64
// hold exactly in any order. The reference's one conversion to float is then the single
// round-to-nearest-even of the exact sum, which is the model's definition.

struct Value16 {
  std::uint16_t bits;
  long double value;
};
struct Value32 {
  float as_float;
  long double value;
};

struct Format16 {
  int fraction_bits, bias;
};
Format16 format_of(MmaTag tag) { return tag == MmaTag::fp16 ? Format16{10, 15} : Format16{7, 127}; }

// A normal number in [2^min_exp, 2^(max_exp + 1)), or (1 time in 16) a signed zero; its value is
// computed from the same sign, exponent and significand independently of the bit encoding.
Value16 random_value16(MmaTag tag, int min_exp, int max_exp, std::mt19937_64& rng) {
  const Format16 f = format_of(tag);
  const bool negative = rng() & 1;
  const std::uint16_t sign = negative ? 0x8000 : 0;
  if (rng() % 16 == 0) return {sign, negative ? -0.0L : 0.0L};
  const int exponent = min_exp + static_cast<int>(rng() % (max_exp - min_exp + 1));
  const std::uint32_t fraction = rng() & ((1u << f.fraction_bits) - 1);
  const long double magnitude =
      std::ldexp(static_cast<long double>(fraction | (1u << f.fraction_bits)), exponent - f.fraction_bits);
  const auto bits = static_cast<std::uint16_t>(sign | ((exponent + f.bias) << f.fraction_bits) | fraction);
  return {bits, negative ? -magnitude : magnitude};
}

Value32 random_value32(int min_exp, int max_exp, std::mt19937_64& rng) {
  const bool negative = rng() & 1;
  const int exponent = min_exp + static_cast<int>(rng() % (max_exp - min_exp + 1));
  const std::uint32_t fraction = rng() & 0x7FFFFFu;
  const std::uint32_t bits =
      (negative ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(exponent + 127) << 23) | fraction;
  const long double magnitude = std::ldexp(static_cast<long double>(fraction | 0x800000u), exponent - 23);
  return {std::bit_cast<float>(bits), negative ? -magnitude : magnitude};
}

struct MmaProblem {
  Value16 a[16][16], b[16][8];
  Value32 c[16][8];
};

MmaProblem random_problem(MmaTag tag, std::mt19937_64& rng) {
  const int band = tag == MmaTag::fp16 ? 4 : 8;
  MmaProblem p;
  for (auto& row : p.a)
    for (auto& x : row) x = random_value16(tag, -band, band, rng);
  for (auto& row : p.b)
    for (auto& x : row) x = random_value16(tag, -band, band, rng);
  for (auto& row : p.c)
    for (auto& x : row) x = random_value32(-band, band, rng);
  return p;
}

// The 32 lanes' fragments of A (with the given layout), B and C (with the real ones).
struct WarpOperands {
  MmaA a[32]{};
  MmaB b[32]{};
  MmaC c[32]{};
};
template <class A, class B, class C>  // callables (row, col) -> the element's bits (A, B) or value (C)
WarpOperands distribute(A a_at, B b_at, C c_at, LayoutFn a_layout = mma_a_element) {
  WarpOperands w;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const MatrixCoord at = a_layout(lane, i);
      w.a[lane].reg[i / 2] |= std::uint32_t{a_at(at.row, at.col)} << (16 * (i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const MatrixCoord at = mma_b_element(lane, i);
      w.b[lane].reg[i / 2] |= std::uint32_t{b_at(at.row, at.col)} << (16 * (i % 2));
      const MatrixCoord c_at_lane = mma_c_element(lane, i);
      w.c[lane].reg[i] = c_at(c_at_lane.row, c_at_lane.col);
    }
  }
  return w;
}

// Distributes the problem with the given A layout (B and C with the real ones), runs the warp
// model, and counts D elements whose bits differ from the long double reference.
int mma_mismatches(MmaTag tag, const MmaProblem& p, LayoutFn a_layout) {
  const WarpOperands w = distribute([&](int r, int c) { return p.a[r][c].bits; }, [&](int r, int c) { return p.b[r][c].bits; },
                                    [&](int r, int c) { return p.c[r][c].as_float; }, a_layout);
  MmaC d[32];
  mma_m16n8k16_warp(tag, w.a, w.b, w.c, d);
  int mismatches = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) {
      const MatrixCoord at = mma_c_element(lane, i);
      long double sum = p.c[at.row][at.col].value;
      for (int k = 0; k < 16; ++k) sum += p.a[at.row][k].value * p.b[k][at.col].value;
      const auto expected = static_cast<float>(sum);
      mismatches += std::bit_cast<std::uint32_t>(d[lane].reg[i]) != std::bit_cast<std::uint32_t>(expected);
    }
  return mismatches;
}

TEST(ArchMma, RandomProductsEqualTheLongDoubleReference) {
  std::mt19937_64 rng(20240611);
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16})
    for (int trial = 0; trial < 50; ++trial)
      ASSERT_EQ(mma_mismatches(tag, random_problem(tag, rng), mma_a_element), 0) << "trial " << trial;
}

// mma_m16n8k16_warp's fast path (a double sum whose every partial sum turns out exact) against the
// 576-bit sum alone, element by element and bit for bit, on operands from three regimes: a narrow
// band (the fast path takes nearly every element), any finite bit pattern (exponent spans beyond
// double's 53 bits: many elements fall back, subnormals and overflow included) and any pattern at
// all (NaN and inf operands: the warp falls back).
TEST(ArchMma, FastPathAgreesWithTheExactSum) {
  std::mt19937_64 rng(314);
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
    const FloatFormat format = tag == MmaTag::fp16 ? kFp16Format : kBf16Format;
    const std::uint16_t special = tag == MmaTag::fp16 ? 0x7C00 : 0x7F80;  // exponent field all ones
    for (int trial = 0; trial < 600; ++trial) {
      const int regime = trial % 3;
      const auto bits16 = [&]() -> std::uint16_t {
        if (regime == 0) return random_value16(tag, -3, 3, rng).bits;
        auto h = static_cast<std::uint16_t>(rng());
        while (regime == 1 && (h & special) == special) h = static_cast<std::uint16_t>(rng());
        return h;
      };
      const auto bits32 = [&]() -> std::uint32_t {
        if (regime == 0) return std::bit_cast<std::uint32_t>(random_value32(-3, 3, rng).as_float);
        auto x = static_cast<std::uint32_t>(rng());
        while (regime == 1 && (x & 0x7F800000u) == 0x7F800000u) x = static_cast<std::uint32_t>(rng());
        return x;
      };
      std::uint16_t a_bits[16][16], b_bits[16][8];
      std::uint32_t c_bits[16][8];
      for (auto& row : a_bits)
        for (auto& x : row) x = bits16();
      for (auto& row : b_bits)
        for (auto& x : row) x = bits16();
      for (auto& row : c_bits)
        for (auto& x : row) x = bits32();
      const WarpOperands w = distribute([&](int r, int c) { return a_bits[r][c]; }, [&](int r, int c) { return b_bits[r][c]; },
                                        [&](int r, int c) { return std::bit_cast<float>(c_bits[r][c]); });
      MmaC d[32];
      mma_m16n8k16_warp(tag, w.a, w.b, w.c, d);
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < 4; ++i) {
          const MatrixCoord at = mma_c_element(lane, i);
          ExactFp32Sum sum;
          sum.add(decode(c_bits[at.row][at.col], kFp32Format));
          for (int k = 0; k < 16; ++k) sum.add_product(decode(a_bits[at.row][k], format), decode(b_bits[k][at.col], format));
          const float want = sum.round_to_fp32(), got = d[lane].reg[i];
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << "trial " << trial << " lane " << lane << " i " << i;
            continue;
          }
          ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
              << "trial " << trial << " regime " << regime << " lane " << lane << " i " << i << ": " << got << " vs " << want;
        }
    }
  }
}

TEST(ArchMma, AMisplacedElementIsDetected) {
  // Lane 3's a0 and a1 (A[0][6], A[0][7]) exchanged when distributing: row 0 of D must change.
  constexpr LayoutFn swapped = [](int lane, int i) {
    return mma_a_element(lane, lane == 3 && i < 2 ? 1 - i : i);
  };
  std::mt19937_64 rng(7);
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16})
    EXPECT_GT(mma_mismatches(tag, random_problem(tag, rng), swapped), 0);
}

// Q K^T and K Q^T in the kernels' order (transposed_products.h): element (i, j) of the one equals
// element (j, i) of the other bit for bit, what docs/error-bounds.md (B1') assumes of the backward's
// recomputed logits. The twin: the backward summing its k-steps in the other order differs.
int transposed_mismatches(MmaTag tag, const std::uint16_t* q, const std::uint16_t* k, bool reversed_backward) {
  namespace tp = tests::transposed;
  float s[tp::kRows * tp::kRows], st[tp::kRows * tp::kRows];
  for (int n0 = 0; n0 < tp::kRows; n0 += 8) {
    MmaC fwd[32]{}, bwd[32]{};
    for (int step = 0; step < tp::kHeadDim / 16; ++step) {
      MmaA a[32], a_t[32];
      MmaB b[32], b_t[32];
      const int k0 = 16 * step, k0_t = 16 * (reversed_backward ? tp::kHeadDim / 16 - 1 - step : step);
      for (int lane = 0; lane < 32; ++lane) {
        a[lane] = tp::a_fragment(q, lane, k0), b[lane] = tp::b_fragment(k, lane, n0, k0);
        a_t[lane] = tp::a_fragment(k, lane, k0_t), b_t[lane] = tp::b_fragment(q, lane, n0, k0_t);
      }
      mma_m16n8k16_warp(tag, a, b, fwd, fwd);
      mma_m16n8k16_warp(tag, a_t, b_t, bwd, bwd);
    }
    for (int lane = 0; lane < 32; ++lane) tp::store_c(fwd[lane], lane, n0, s), tp::store_c(bwd[lane], lane, n0, st);
  }
  int mismatches = 0;
  for (int i = 0; i < tp::kRows; ++i)
    for (int j = 0; j < tp::kRows; ++j)
      mismatches += std::bit_cast<std::uint32_t>(s[i * tp::kRows + j]) != std::bit_cast<std::uint32_t>(st[j * tp::kRows + i]);
  return mismatches;
}

TEST(ArchMma, TransposedOperandsGiveTheTransposedLogitsBitForBit) {
  std::mt19937_64 rng(20261129);
  namespace tp = tests::transposed;
  int reversed_differ = 0;
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16})
    for (int trial = 0; trial < 40; ++trial) {
      std::uint16_t q[tp::kRows * tp::kHeadDim], k[tp::kRows * tp::kHeadDim];
      const int band = trial % 2 ? 12 : 3;  // near 1, and spread wide enough that most sums round
      for (auto& x : q) x = random_value16(tag, -band, band, rng).bits;
      for (auto& x : k) x = random_value16(tag, -band, band, rng).bits;
      ASSERT_EQ(transposed_mismatches(tag, q, k, false), 0) << "trial " << trial;
      reversed_differ += transposed_mismatches(tag, q, k, true) > 0;
    }
  EXPECT_GT(reversed_differ, 40) << "the twin (k-steps summed in the other order) should differ in most trials";
}

TEST(ArchMma, DOverwritesCInPlace) {
  std::mt19937_64 rng(11);
  const MmaProblem p = random_problem(MmaTag::fp16, rng);
  WarpOperands w = distribute([&](int r, int c) { return p.a[r][c].bits; }, [&](int r, int c) { return p.b[r][c].bits; },
                              [](int r, int c) { return static_cast<float>(r * 8 + c); });
  MmaC d[32];
  mma_m16n8k16_warp(MmaTag::fp16, w.a, w.b, w.c, d);
  mma_m16n8k16_warp(MmaTag::fp16, w.a, w.b, w.c, w.c);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) EXPECT_EQ(w.c[lane].reg[i], d[lane].reg[i]);
}

// ---------------------------------------------------------------------------------------------
// The rounding model over the full range, against MPFR: the sum is exact at 1100 bits (the addends
// lie between 2^-266 and 2^256) and mpfr_get_flt rounds it once, to nearest even, with subnormals.

float mpfr_reference(float c, const float* a, const float* b, int n) {
  mpfr_t acc, product, x, y;
  mpfr_inits2(1100, acc, product, x, y, static_cast<mpfr_ptr>(nullptr));
  mpfr_set_flt(acc, c, MPFR_RNDN);
  for (int k = 0; k < n; ++k) {
    mpfr_set_flt(x, a[k], MPFR_RNDN);
    mpfr_set_flt(y, b[k], MPFR_RNDN);
    mpfr_mul(product, x, y, MPFR_RNDN);
    mpfr_add(acc, acc, product, MPFR_RNDN);
  }
  const float result = mpfr_get_flt(acc, MPFR_RNDN);
  mpfr_clears(acc, product, x, y, static_cast<mpfr_ptr>(nullptr));
  return result;
}

float random_finite32(std::mt19937_64& rng) {
  for (;;) {
    const auto bits = static_cast<std::uint32_t>(rng());
    if ((bits & 0x7F800000u) != 0x7F800000u) return std::bit_cast<float>(bits);
  }
}

std::uint16_t random_finite16(MmaTag tag, std::mt19937_64& rng) {
  const std::uint16_t exponent_mask = tag == MmaTag::fp16 ? 0x7C00 : 0x7F80;
  for (;;) {
    const auto bits = static_cast<std::uint16_t>(rng());
    if ((bits & exponent_mask) != exponent_mask) return bits;
  }
}

// A value near 2^exponent (clamped to the format), random sign and fraction: terms of similar size
// make cancellation and ties likely, unlike uniformly random bit patterns.
std::uint16_t near_power16(MmaTag tag, int exponent, std::mt19937_64& rng) {
  const Format16 f = format_of(tag);
  const int biased = std::clamp(exponent + f.bias, 1, 2 * f.bias);
  std::uint32_t fraction = rng() & ((1u << f.fraction_bits) - 1);
  if (rng() % 2) fraction &= ~0x7u;  // short significands make exact ties likelier
  return static_cast<std::uint16_t>(((rng() & 1) << 15) | (biased << f.fraction_bits) | fraction);
}

float to_float(MmaTag tag, std::uint16_t bits) {
  return tag == MmaTag::fp16 ? flashproof::fp16_bits_to_float(bits) : flashproof::bf16_bits_to_float(bits);
}

struct DotCase {
  std::uint16_t a_bits[16], b_bits[16];
  float a[16], b[16], c;
};

enum class DotKind { uniform, clustered, cancelling };

std::uint16_t pow2_16(MmaTag tag, int exponent, bool negative) {
  const Format16 f = format_of(tag);
  return static_cast<std::uint16_t>((negative ? 0x8000 : 0) | ((exponent + f.bias) << f.fraction_bits));
}

// uniform: random finite bit patterns. clustered: terms around a product exponent swept over the
// whole range, so that ties, subnormal and overflowing results occur. cancelling: c = +-2^E, 15
// products far below it, and a last product of exactly -c, so the result is the small products'
// sum, which an accumulator that rounds (long double) loses.
DotCase random_dot_case(MmaTag tag, DotKind kind, std::mt19937_64& rng) {
  const int min_normal = tag == MmaTag::fp16 ? -14 : -126, max_normal = tag == MmaTag::fp16 ? 15 : 127;
  const int gap = tag == MmaTag::fp16 ? 50 : 80;
  const int low = kind == DotKind::cancelling ? std::max(2 * min_normal + gap, -126) : 2 * min_normal - 4;
  const int high = kind == DotKind::cancelling ? std::min(2 * max_normal, 127) : 2 * max_normal + 4;
  const int big = low + static_cast<int>(rng() % (high - low + 1));
  const int target = kind == DotKind::cancelling ? big - gap : big;
  DotCase d;
  for (int k = 0; k < 16; ++k) {
    const int a_scale = target / 2 + static_cast<int>(rng() % 5) - 2;
    const int b_scale = target - a_scale + static_cast<int>(rng() % 3) - 1;
    d.a_bits[k] = kind == DotKind::uniform ? random_finite16(tag, rng) : near_power16(tag, a_scale, rng);
    d.b_bits[k] = kind == DotKind::uniform ? random_finite16(tag, rng) : near_power16(tag, b_scale, rng);
  }
  const auto c_significand = static_cast<float>(static_cast<std::int64_t>(rng() % (1u << 25)) - (1 << 24));
  switch (kind) {
    case DotKind::uniform:
      d.c = random_finite32(rng);
      break;
    case DotKind::clustered:
      d.c = std::ldexp(c_significand, target + 1 - 24);
      break;
    case DotKind::cancelling: {
      const bool negative = rng() & 1;
      d.c = std::ldexp(negative ? -1.0f : 1.0f, big);
      d.a_bits[15] = pow2_16(tag, big / 2, !negative);
      d.b_bits[15] = pow2_16(tag, big - big / 2, false);
      break;
    }
  }
  for (int k = 0; k < 16; ++k) {
    d.a[k] = to_float(tag, d.a_bits[k]);
    d.b[k] = to_float(tag, d.b_bits[k]);
  }
  return d;
}

TEST(ArchExactSum, FullRangeDotProductsMatchMpfr) {
  std::mt19937_64 rng(99);
  int subnormal = 0, infinite = 0, long_double_wrong = 0;
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
    const FloatFormat format = tag == MmaTag::fp16 ? kFp16Format : kBf16Format;
    for (int trial = 0; trial < 30000; ++trial) {
      const DotCase d = random_dot_case(tag, static_cast<DotKind>(trial % 3), rng);
      ExactFp32Sum sum;
      sum.add(decode(std::bit_cast<std::uint32_t>(d.c), kFp32Format));
      long double held = d.c;
      for (int k = 0; k < 16; ++k) {
        sum.add_product(decode(d.a_bits[k], format), decode(d.b_bits[k], format));
        held += static_cast<long double>(d.a[k]) * d.b[k];
      }
      const float model = sum.round_to_fp32(), expected = mpfr_reference(d.c, d.a, d.b, 16);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(model), std::bit_cast<std::uint32_t>(expected))
          << "trial " << trial << " expected " << expected << " got " << model;
      subnormal += std::fpclassify(expected) == FP_SUBNORMAL;
      infinite += std::isinf(expected);
      long_double_wrong +=
          std::bit_cast<std::uint32_t>(static_cast<float>(held)) != std::bit_cast<std::uint32_t>(expected);
    }
  }
  // The cases are hard enough: they reach the regimes and the sums a long double accumulator gets wrong.
  EXPECT_GT(subnormal, 100);
  EXPECT_GT(infinite, 100);
  EXPECT_GT(long_double_wrong, 100);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed cases of the rounding model, with bf16 inputs given as powers of two.

std::uint16_t bf16_pow2(int exponent, bool negative = false) {
  return static_cast<std::uint16_t>((negative ? 0x8000 : 0) | ((exponent + 127) << 7));
}

float model_sum(float c, const std::vector<std::pair<std::uint16_t, std::uint16_t>>& bf16_products) {
  ExactFp32Sum sum;
  sum.add(decode(std::bit_cast<std::uint32_t>(c), kFp32Format));
  for (const auto& [a, b] : bf16_products) sum.add_product(decode(a, kBf16Format), decode(b, kBf16Format));
  return sum.round_to_fp32();
}

TEST(ArchExactSum, RoundsOnceWhereLongDoubleWouldRoundTwice) {
  // 1 + 2^-24 + 2^-80: just above the tie between 1 and 1 + 2^-23, so it rounds up. Held in long
  // double, 2^-80 is lost first and the tie then rounds to even, down to 1.
  const float model = model_sum(1.0f, {{bf16_pow2(-12), bf16_pow2(-12)}, {bf16_pow2(-40), bf16_pow2(-40)}});
  EXPECT_EQ(model, 1.0f + 0x1p-23f);
  const long double held = 1.0L + 0x1p-24L + 0x1p-80L;
  EXPECT_EQ(static_cast<float>(held), 1.0f);
}

TEST(ArchExactSum, TiesGoToEven) {
  EXPECT_EQ(model_sum(1.0f, {{bf16_pow2(-12), bf16_pow2(-12)}}), 1.0f);
  EXPECT_EQ(model_sum(1.0f + 0x1p-23f, {{bf16_pow2(-12), bf16_pow2(-12)}}), 1.0f + 0x1p-22f);
}

TEST(ArchExactSum, CancellationKeepsTinyTerms) {
  // 2^100 - 2^50 * 2^50 + 2^-50 * 2^-50 = 2^-100 exactly.
  EXPECT_EQ(model_sum(0x1p100f, {{bf16_pow2(50, true), bf16_pow2(50)}, {bf16_pow2(-50), bf16_pow2(-50)}}),
            0x1p-100f);
  // Products beyond fp32's range that cancel leave a finite sum.
  EXPECT_EQ(model_sum(3.0f, {{bf16_pow2(120), bf16_pow2(120)}, {bf16_pow2(120, true), bf16_pow2(120)}}),
            3.0f);
}

TEST(ArchExactSum, OverflowAndSubnormals) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(model_sum(0.0f, {{bf16_pow2(127), bf16_pow2(2)}}), kInf);
  EXPECT_EQ(model_sum(0.0f, {{bf16_pow2(127, true), bf16_pow2(2)}}), -kInf);
  EXPECT_EQ(model_sum(0.0f, {{bf16_pow2(-70), bf16_pow2(-70)}}), 0x1p-140f);
  // 2^-150 is the tie between 0 and the smallest subnormal: to even (0); a little more rounds up.
  EXPECT_EQ(std::bit_cast<std::uint32_t>(model_sum(0.0f, {{bf16_pow2(-75), bf16_pow2(-75)}})), 0u);
  EXPECT_EQ(model_sum(0.0f, {{bf16_pow2(-75), bf16_pow2(-75)}, {bf16_pow2(-100), bf16_pow2(-100)}}),
            0x1p-149f);
  // A negative value that rounds to zero is -0.
  EXPECT_EQ(std::bit_cast<std::uint32_t>(model_sum(0.0f, {{bf16_pow2(-80, true), bf16_pow2(-80)}})),
            0x80000000u);
}

TEST(ArchExactSum, NanInfinityAndSignedZero) {
  const std::uint16_t inf = 0x7F80, neg_inf = 0xFF80, nan = 0x7FC0, zero = 0x0000, neg_zero = 0x8000;
  const std::uint16_t one = bf16_pow2(0);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(model_sum(0.0f, {{inf, zero}})));
  EXPECT_TRUE(std::isnan(model_sum(0.0f, {{nan, one}})));
  EXPECT_TRUE(std::isnan(model_sum(0.0f, {{inf, one}, {neg_inf, one}})));
  EXPECT_TRUE(std::isnan(model_sum(std::numeric_limits<float>::quiet_NaN(), {{one, one}})));
  EXPECT_TRUE(std::isnan(model_sum(kInf, {{neg_inf, one}})));
  EXPECT_EQ(model_sum(0.0f, {{inf, one}, {one, one}}), kInf);
  EXPECT_EQ(model_sum(-kInf, {{one, one}}), -kInf);
  // -0 only when every addend is -0.
  EXPECT_EQ(std::bit_cast<std::uint32_t>(model_sum(-0.0f, {{neg_zero, zero}, {zero, neg_zero}})),
            0x80000000u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(model_sum(-0.0f, {{zero, zero}})), 0u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(model_sum(-0.0f, {{one, one}, {bf16_pow2(0, true), one}})), 0u);
}

// ---------------------------------------------------------------------------------------------
// half_bits.h against core/dtype.h's independent conversions, every bit pattern.

TEST(ArchHalfBits, AgreesWithCoreOnEveryPattern) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
      const float ours = tag == MmaTag::fp16 ? fp16_bits_to_float(h) : bf16_bits_to_float(h);
      const float core = to_float(tag, h);
      if (std::isnan(core)) {
        ASSERT_TRUE(std::isnan(ours)) << bits;
        continue;
      }
      ASSERT_EQ(std::bit_cast<std::uint32_t>(ours), std::bit_cast<std::uint32_t>(core)) << std::hex << bits;
      const DecodedFloat d = decode(h, tag == MmaTag::fp16 ? kFp16Format : kBf16Format);
      if (d.kind == FloatKind::finite) {
        const float value = std::ldexp(static_cast<float>(d.significand), d.exponent);
        ASSERT_EQ(d.negative ? -value : value, core) << std::hex << bits;
      } else {
        ASSERT_TRUE(std::isinf(core)) << std::hex << bits;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// ldmatrix: four 8x8 matrices with distinct elements in padded, interleaved rows.

using LdmatrixExpectation = MatrixCoord (*)(int lane, int half, bool trans);

// The ISA's layout restated: four consecutive lanes load one row, two consecutive elements each,
// low half first; .trans reads the matrix column-major.
MatrixCoord documented_ldmatrix(int lane, int half, bool trans) {
  const int row = lane / 4, col = 2 * (lane % 4) + half;
  return trans ? MatrixCoord{col, row} : MatrixCoord{row, col};
}

struct LdmatrixTiles {
  static constexpr int kStride = 12;  // padded rows, so row addresses are not one contiguous block
  std::vector<std::uint16_t> storage = std::vector<std::uint16_t>(32 * kStride, 0xFFFF);
  const std::uint16_t* rows[32] = {};  // lanes past 8 * count give no address

  static std::uint16_t value(int matrix, int row, int col) {
    return static_cast<std::uint16_t>(0x1000 * (matrix + 1) + 0x10 * row + col);
  }

  explicit LdmatrixTiles(int count) {
    for (int matrix = 0; matrix < count; ++matrix)
      for (int row = 0; row < 8; ++row) {
        std::uint16_t* at = &storage[(row * 4 + (3 - matrix)) * kStride];  // interleaved, matrices reversed
        for (int col = 0; col < 8; ++col) at[col] = value(matrix, row, col);
        rows[8 * matrix + row] = at;
      }
  }
};

int ldmatrix_mismatches(int count, bool trans, LdmatrixExpectation expected) {
  constexpr std::uint32_t kUntouched = 0xDEADBEEF;
  const LdmatrixTiles tiles(count);
  std::uint32_t out[32][4];
  for (auto& lane : out)
    for (auto& reg : lane) reg = kUntouched;
  ldmatrix_warp(count, trans, tiles.rows, out);
  int mismatches = 0;
  for (int lane = 0; lane < 32; ++lane)
    for (int matrix = 0; matrix < 4; ++matrix) {
      if (matrix >= count) {
        mismatches += out[lane][matrix] != kUntouched;
        continue;
      }
      const MatrixCoord low = expected(lane, 0, trans), high = expected(lane, 1, trans);
      const std::uint32_t want = pack(LdmatrixTiles::value(matrix, low.row, low.col),
                                      LdmatrixTiles::value(matrix, high.row, high.col));
      mismatches += out[lane][matrix] != want;
    }
  return mismatches;
}

TEST(ArchLdmatrix, EveryCountAndTransposeFollowsTheIsa) {
  for (const int count : {1, 2, 4})
    for (const bool trans : {false, true})
      EXPECT_EQ(ldmatrix_mismatches(count, trans, documented_ldmatrix), 0)
          << "x" << count << (trans ? ".trans" : "");
}

TEST(ArchLdmatrix, WrongExpectationsAreDetected) {
  constexpr LdmatrixExpectation lane9_halves_swapped = [](int lane, int half, bool trans) {
    return documented_ldmatrix(lane, lane == 9 ? 1 - half : half, trans);
  };
  constexpr LdmatrixExpectation never_transposed = [](int lane, int half, bool) {
    return documented_ldmatrix(lane, half, false);
  };
  for (const int count : {1, 2, 4}) {
    EXPECT_GT(ldmatrix_mismatches(count, false, lane9_halves_swapped), 0);
    EXPECT_GT(ldmatrix_mismatches(count, true, never_transposed), 0);
  }
}

TEST(ArchLdmatrix, RejectsOtherCounts) {
  const LdmatrixTiles tiles(4);
  std::uint32_t out[32][4];
  EXPECT_THROW(ldmatrix_warp(3, false, tiles.rows, out), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// ldmatrix feeding mma, as the kernels use it: A (16x16 row-major) by .x4 with lanes 0-15 giving
// rows 0-15 at column 0 and lanes 16-31 the same rows at column 8; B stored n-major ([n][k], "col")
// by .x2 with lanes 0-7 giving n = 0..7 at k = 0 and lanes 8-15 at k = 8; B stored k-major
// ([k][n], as V is) by .x2.trans with lanes 0-15 giving k = 0..15.

TEST(ArchLdmatrix, LoadsMmaFragments) {
  std::uint16_t a[16][16], b_nk[8][16], b_kn[16][8];
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) a[r][c] = static_cast<std::uint16_t>(r * 16 + c);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n) b_nk[n][k] = b_kn[k][n] = static_cast<std::uint16_t>(0x8000 + k * 8 + n);

  const std::uint16_t* a_rows[32];
  const std::uint16_t* b_nk_rows[32] = {};
  const std::uint16_t* b_kn_rows[32] = {};
  for (int lane = 0; lane < 32; ++lane) a_rows[lane] = &a[lane % 16][8 * (lane / 16)];
  for (int lane = 0; lane < 16; ++lane) {
    b_nk_rows[lane] = &b_nk[lane % 8][8 * (lane / 8)];
    b_kn_rows[lane] = &b_kn[lane][0];
  }
  std::uint32_t a_regs[32][4], b_regs[32][4], v_regs[32][4];
  ldmatrix_warp(4, false, a_rows, a_regs);
  ldmatrix_warp(2, false, b_nk_rows, b_regs);
  ldmatrix_warp(2, true, b_kn_rows, v_regs);
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const MatrixCoord at = mma_a_element(lane, i);
      EXPECT_EQ(fragment_half(a_regs[lane], i), a[at.row][at.col]) << "lane " << lane << " a" << i;
    }
    for (int i = 0; i < 4; ++i) {
      const MatrixCoord at = mma_b_element(lane, i);
      EXPECT_EQ(fragment_half(b_regs[lane], i), b_kn[at.row][at.col]) << "lane " << lane << " b" << i;
      EXPECT_EQ(fragment_half(v_regs[lane], i), b_kn[at.row][at.col])
          << "lane " << lane << " b" << i << " (trans)";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// exp2_approx's host model (kernels/arch/scalar_math.h: std::exp2) against the properties the proofs
// assume (docs/proofs.md, theorem 6): exp2(-inf) = +0, exp2(+-0) = 1, monotone non-decreasing,
// exp2(x) in [0, 1] for x <= 0, never NaN for a non-NaN x. On a dense sample: a one-off run over
// all 2^32 patterns (about 30 s) found no violation by glibc 2.36's exp2f, too slow for a unit test.

using Exp2 = float (*)(float);

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// The inputs, in increasing order (-0 before +0, each bit pattern once): every 1021st fp32 bit
// pattern of magnitude at most 200 (about 2.2 million, densest near 0 as the patterns are), every
// pattern within 2^15 patterns of the points where an exp2 changes regime (+-1; -126, below which
// the result is subnormal; -149 and -150, around which it underflows to 0; 127 and 128, around which
// it overflows; +-200, the sweep's ends), the 2^15 + 1 smallest magnitudes of each sign (subnormal),
// and the special values (+-0, +-inf, the extreme finite and subnormal values, huge magnitudes):
// about 3.2 million.
std::vector<float> exp2_inputs() {
  std::vector<std::uint32_t> bits;
  const std::uint32_t limit = std::bit_cast<std::uint32_t>(200.0f);
  for (std::uint32_t b = 0; b <= limit; b += 1021) bits.insert(bits.end(), {b, b | 0x80000000u});
  const auto window = [&](float centre) {
    const std::uint32_t c = std::bit_cast<std::uint32_t>(centre);
    for (std::uint32_t d = 0; d <= (1u << 15); ++d) {
      bits.push_back(c + d);
      if ((c & 0x7fffffffu) >= d) bits.push_back(c - d);
    }
  };
  for (const float centre : {1.0f, 126.0f, 127.0f, 128.0f, 149.0f, 150.0f, 200.0f}) {
    window(centre);
    window(-centre);
  }
  for (std::uint32_t b = 0; b <= (1u << 15); ++b) bits.insert(bits.end(), {b, b | 0x80000000u});
  const float specials[] = {std::numeric_limits<float>::infinity(),  std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::min(),       std::numeric_limits<float>::denorm_min(),
                            from_bits(0x007fffffu),                  1e30f,
                            1e10f,                                   1000.0f,
                            std::numeric_limits<float>::epsilon(),   0x1p-25f,
                            0x1p-24f,                                0.0f};
  for (const float v : specials)
    bits.insert(bits.end(), {std::bit_cast<std::uint32_t>(v), std::bit_cast<std::uint32_t>(-v)});
  std::vector<float> xs;
  for (const std::uint32_t b : bits)
    if (!std::isnan(from_bits(b))) xs.push_back(from_bits(b));
  const auto before = [](float a, float b) { return a < b || (a == b && std::signbit(a) && !std::signbit(b)); };
  std::sort(xs.begin(), xs.end(), before);
  const auto same_bits = [](float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); };
  xs.erase(std::unique(xs.begin(), xs.end(), same_bits), xs.end());
  return xs;
}

std::string show(float v) {
  std::ostringstream os;
  os << std::hexfloat << v << " (0x" << std::hex << std::bit_cast<std::uint32_t>(v) << ")";
  return os.str();
}

// Checks every property on every input; the failure message names the first violation of each.
testing::AssertionResult satisfies_exp2_properties(Exp2 exp2) {
  static const std::vector<float> xs = exp2_inputs();
  std::vector<std::string> violations;
  const float at_minus_inf = exp2(-std::numeric_limits<float>::infinity());
  if (std::bit_cast<std::uint32_t>(at_minus_inf) != 0u)
    violations.push_back("exp2(-inf) = " + show(at_minus_inf) + ", not +0");
  for (const float zero : {0.0f, -0.0f}) {
    if (const float y = exp2(zero); y != 1.0f)
      violations.push_back("exp2(" + show(zero) + ") = " + show(y) + ", not 1");
  }
  bool nan_seen = false, range_seen = false, order_seen = false;
  float previous_x = 0, previous_y = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], y = exp2(x);
    if (std::isnan(y) && !nan_seen) {
      nan_seen = true;
      violations.push_back("NaN: exp2(" + show(x) + ") = " + show(y));
    }
    if (x <= 0 && !(y >= 0.0f && y <= 1.0f) && !range_seen) {
      range_seen = true;
      violations.push_back("outside [0, 1] for x <= 0: exp2(" + show(x) + ") = " + show(y));
    }
    // Non-decreasing: a NaN result, already reported, also fails this comparison.
    if (i > 0 && !(previous_y <= y) && !order_seen) {
      order_seen = true;
      violations.push_back("not monotone: exp2(" + show(previous_x) + ") = " + show(previous_y) + " > exp2(" + show(x) +
                           ") = " + show(y));
    }
    previous_x = x;
    previous_y = y;
  }
  if (violations.empty()) return testing::AssertionSuccess() << xs.size() << " inputs";
  testing::AssertionResult failure = testing::AssertionFailure();
  for (const std::string& v : violations) failure << v << "\n";
  return failure;
}

float host_model(float x) { return exp2_approx(x); }

TEST(ArchScalarMath, Exp2HostModelHasTheProvedProperties) {
  EXPECT_GT(exp2_inputs().size(), 2'000'000u);
  EXPECT_TRUE(satisfies_exp2_properties(host_model));
}

// Broken models: the checker must reject each, naming the property it was built to break.
float linear_near_zero(float x) { return std::fabs(x) < 0x1p-8f ? 1.0f + x : std::exp2(x); }
float nan_at_infinities(float x) { return std::exp2(x) + 0.0f * x; }
float negative_zero_underflow(float x) { return x < -150.0f ? -0.0f : std::exp2(x); }
float overshoots_below_zero(float x) { return x < 0 ? std::nextafter(std::exp2(x), 2.0f) : std::exp2(x); }
float nan_on_overflow(float x) {
  const float y = std::exp2(x);
  return y - y + y;  // inf - inf
}
float scaled_below_one(float x) { return std::exp2(x) * (1.0f - 0x1p-24f); }

TEST(ArchScalarMath, Exp2PropertyCheckRejectsBrokenModels) {
  const auto rejects = [](Exp2 broken, const char* property) {
    const testing::AssertionResult r = satisfies_exp2_properties(broken);
    return !r && std::string(r.message()).find(property) != std::string::npos
               ? testing::AssertionSuccess()
               : testing::AssertionFailure() << "expected a violation of '" << property << "', got: "
                                             << (r ? "none" : r.message());
  };
  EXPECT_FALSE(satisfies_exp2_properties(linear_near_zero));
  EXPECT_TRUE(rejects(linear_near_zero, "not monotone"));
  EXPECT_TRUE(rejects(nan_at_infinities, "exp2(-inf) = "));
  EXPECT_TRUE(rejects(nan_at_infinities, "NaN: exp2(-inf"));
  EXPECT_TRUE(rejects(negative_zero_underflow, "exp2(-inf) = -0x0p+0 (0x80000000), not +0"));
  EXPECT_TRUE(rejects(overshoots_below_zero, "outside [0, 1]"));
  EXPECT_TRUE(rejects(nan_on_overflow, "NaN: exp2(0x1p+7"));
  EXPECT_TRUE(rejects(scaled_below_one, "exp2(0x0p+0 (0x0)) = "));
}

// ---- fp32 -> fp16 / bf16 rounding (convert.h's host model) ----

// Mismatches of the host conversion (core/float_format.h's rounding from an fp32 source) against
// core/dtype.h's to_bits (the same rounding from a double source, checked against an independent
// oracle in tests/core/test_dtype.cpp) over every 997th fp32 bit pattern (all binades, subnormals,
// both signs), the patterns next to each fp16/bf16 rounding boundary, and the specials. NaN only
// has to stay NaN.
std::int64_t conversion_mismatches(std::uint16_t (*convert)(std::uint32_t, FloatFormat)) {
  std::vector<std::uint32_t> inputs = {0u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u,
                                       0x477FEFFFu, 0x477FF000u, 0x477FF001u, 0x7F7FFFFFu, 0x33000000u, 0x33000001u,
                                       0x32FFFFFFu, 0x38800000u, 0x387FE000u, 0x387FF000u};
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFu; b += 997) inputs.push_back(static_cast<std::uint32_t>(b));
  for (std::uint32_t b = 0x00000FFFu; b < 0x7F800000u; b += 0x2000u) {  // fp16 halfway neighbourhoods
    inputs.push_back(b), inputs.push_back(b + 1), inputs.push_back(b + 0x1000u);
  }
  for (std::uint32_t b = 0x00007FFFu; b < 0x7F800000u; b += 0x10000u) {  // bf16 halfway neighbourhoods
    inputs.push_back(b), inputs.push_back(b + 1), inputs.push_back(b + 0x8000u);
  }
  std::int64_t bad = 0;
  for (std::uint32_t bits : inputs) {
    const float x = std::bit_cast<float>(bits);
    for (const auto& [format, dtype] : {std::pair{kFp16Format, DType::fp16}, std::pair{kBf16Format, DType::bf16}}) {
      const std::uint16_t got = convert(bits, format);
      if (std::isnan(x)) {
        bad += std::isnan(from_bits(dtype, got)) ? 0 : 1;
      } else {
        bad += got == to_bits(dtype, static_cast<double>(x)) ? 0 : 1;
      }
    }
  }
  return bad;
}

std::uint16_t shipped_conversion(std::uint32_t bits, FloatFormat f) {
  return float_to_bits16(f.exponent_bits == 8 ? MmaTag::bf16 : MmaTag::fp16, std::bit_cast<float>(bits));
}

// Twin: truncation instead of rounding to nearest even.
std::uint16_t truncating_conversion(std::uint32_t bits, FloatFormat f) {
  const std::uint16_t rounded = shipped_conversion(bits, f);
  const float x = std::bit_cast<float>(bits), r = f.exponent_bits == 8 ? bf16_bits_to_float(rounded)
                                                                      : fp16_bits_to_float(rounded);
  return std::fabs(r) > std::fabs(x) && std::isfinite(r) ? static_cast<std::uint16_t>(rounded - 1) : rounded;
}

TEST(Convert, HostRoundingMatchesCorrectRoundingToFp16AndBf16) {
  EXPECT_EQ(conversion_mismatches(shipped_conversion), 0);
  EXPECT_GT(conversion_mismatches(truncating_conversion), 1000);
  EXPECT_EQ(pack_rounded(MmaTag::fp16, 1.0f, -2.0f), 0xC0003C00u);  // low half first
}

}  // namespace
}  // namespace flashproof::arch
