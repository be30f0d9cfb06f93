// The kernels of kernels/sample_kernels.h on the GPU against the same source on the emulator
// (ctest label "gpu"; each GpuVsEmulator test skips itself where no GPU can be used):
// - sample_matmul (cp.async, ldmatrix, mma.sync, barriers), fp16 and bf16: bitwise equal where the
//   inputs make every product and partial sum exact (small integers), otherwise within a bound that
//   covers the hardware's truncating accumulation against the host model's single rounding;
// - sample_block_sum (shuffles, shared memory, a barrier): bitwise equal, the kernel fixing the order
//   of its fp32 additions;
// - sample_atomic_histogram (fp32 atomicAdd): bitwise equal for integers, whose sums are exact in any
//   order, otherwise within the bound on reordered summation.
// The comparisons themselves are checked without a GPU (GpuComparisons): each must reject a
// deliberately broken result of the emulator and accept the differences it is meant to allow.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/arch/half_bits.h"
#include "tests/gpu_support.h"
#include "tests/kernels/gpu/sample_runs.h"

namespace flashproof::tests::samples {
namespace {

using arch::MmaTag;

const char* name(MmaTag tag) { return tag == MmaTag::fp16 ? "fp16" : "bf16"; }

// ---- comparisons ----

std::string describe(float v) {
  std::ostringstream os;
  os << v << " = " << std::hexfloat << v << " (0x" << std::hex << std::bit_cast<std::uint32_t>(v) << ")";
  return os.str();
}

testing::AssertionResult bitwise_equal(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return testing::AssertionFailure() << got.size() << " elements against " << want.size();
  std::size_t mismatches = 0;
  std::ostringstream shown;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want[i])) continue;
    if (++mismatches <= 5) shown << "\n  [" << i << "] " << describe(got[i]) << " against " << describe(want[i]);
  }
  if (mismatches == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << mismatches << " of " << got.size()
                                     << " elements differ bitwise:" << shown.str();
}

// |got - want| <= tolerance, element by element (a NaN on either side fails).
testing::AssertionResult within(const std::vector<float>& got, const std::vector<float>& want,
                                const std::vector<double>& tolerance) {
  if (got.size() != want.size() || got.size() != tolerance.size())
    return testing::AssertionFailure() << got.size() << " elements against " << want.size() << " with "
                                       << tolerance.size() << " tolerances";
  std::size_t mismatches = 0;
  std::ostringstream shown;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double difference = std::fabs(double{got[i]} - double{want[i]});
    if (difference <= tolerance[i]) continue;
    if (++mismatches <= 5)
      shown << "\n  [" << i << "] " << describe(got[i]) << " against " << describe(want[i]) << ": difference "
            << difference << " > tolerance " << tolerance[i];
  }
  if (mismatches == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << mismatches << " of " << got.size() << " elements outside the tolerance:"
                                     << shown.str();
}

// ---- sample_matmul ----

constexpr int kM = 128, kN = 32, kK = 64;

float decode(std::uint16_t bits, MmaTag tag) {
  return tag == MmaTag::fp16 ? arch::fp16_bits_to_float(bits) : arch::bf16_bits_to_float(bits);
}

// A small integer (|v| < 2^11) as fp16 or bf16 bits.
std::uint16_t encode_small_integer(int v, MmaTag tag) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
  if (tag == MmaTag::bf16 || v == 0) return static_cast<std::uint16_t>(tag == MmaTag::bf16 ? bits >> 16 : 0);
  const std::uint32_t sign = bits >> 31, exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
  return static_cast<std::uint16_t>((sign << 15) | ((exponent - 112) << 10) | (mantissa >> 13));
}

// Integers in [-4, 4] and [-3, 3]: every product and partial sum (|.| <= 12 * 64) is an integer far
// below 2^24, exact in any order and under any alignment, truncation or rounding of fp32 sums.
MatmulInput small_integer_matmul(MmaTag tag) {
  MatmulInput in{kM, kN, kK, tag, {}, {}};
  for (int i = 0; i < kM * kK; ++i) in.a.push_back(encode_small_integer((i * 7 + 3) % 9 - 4, tag));
  for (int i = 0; i < kN * kK; ++i) in.b.push_back(encode_small_integer((i * 5 + 1) % 7 - 3, tag));
  return in;
}

// Random signs and significands, magnitudes in [2^-4, 2^2): products and sums that round.
MatmulInput random_matmul(MmaTag tag, unsigned seed) {
  std::mt19937 rng(seed);
  const auto random_bits = [&] {
    const std::uint32_t sign = rng() & 1u, r = rng();
    if (tag == MmaTag::fp16) return static_cast<std::uint16_t>((sign << 15) | ((11 + r % 6) << 10) | (r >> 8 & 0x3ff));
    return static_cast<std::uint16_t>((sign << 15) | ((123 + r % 6) << 7) | (r >> 8 & 0x7f));
  };
  MatmulInput in{kM, kN, kK, tag, {}, {}};
  for (int i = 0; i < kM * kK; ++i) in.a.push_back(random_bits());
  for (int i = 0; i < kN * kK; ++i) in.b.push_back(random_bits());
  return in;
}

// The exact product, in double (exact here: small integers), rounded to fp32.
std::vector<float> exact_product(const MatmulInput& in) {
  std::vector<float> c(static_cast<std::size_t>(in.m) * in.n);
  for (int i = 0; i < in.m; ++i)
    for (int j = 0; j < in.n; ++j) {
      double sum = 0;
      for (int p = 0; p < in.k; ++p)
        sum += double{decode(in.a[i * in.k + p], in.tag)} * decode(in.b[j * in.k + p], in.tag);
      c[i * in.n + j] = static_cast<float>(sum);
    }
  return c;
}

// Bound on |GPU - emulated| for each element (i, j) of a sample_matmul product (the arithmetic
// models: kernels/arch/mma.h). Each of the k/16 mma steps computes d = c + (sum of 16 products).
// The emulator rounds that once: within 2^-24 |d|. The hardware, as measured on V100, T4 and A100
// (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ Computer
// Science 2021), aligns the addends of a fused group to the largest one's exponent, truncates them
// and truncates the normalised sum: each of the at most 17 addends loses under one unit in the 24th
// bit of the largest addend M, and the normalisation under one unit of a sum at most 17 M, so under
// 34 * 2^-23 * M per group; a step done as two groups of 8 products at most doubles that. So a step
// differs by under 70 * 2^-23 * S < 2^-16 * S, with S = |c| + (sum of the 16 |products|), which is
// at most S_ij = sum over all of K of |a_ip * b_jp| (up to the earlier steps' differences, which a
// step's c carries over unchanged). Hence (k/16) * 2^-16 * S_ij. Derived, not fitted to a GPU.
std::vector<double> mma_tolerance(const MatmulInput& in) {
  std::vector<double> tolerance(static_cast<std::size_t>(in.m) * in.n);
  for (int i = 0; i < in.m; ++i)
    for (int j = 0; j < in.n; ++j) {
      double s = 0;  // products exact in double, their sum within a relative 2^-46 of S_ij
      for (int p = 0; p < in.k; ++p)
        s += std::fabs(double{decode(in.a[i * in.k + p], in.tag)} * decode(in.b[j * in.k + p], in.tag));
      tolerance[i * in.n + j] = (in.k / 16) * 0x1p-16 * s;
    }
  return tolerance;
}

// ---- sample_block_sum ----

std::vector<float> uniform_floats(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = value(rng);
  return v;
}

// The kernel's order on the host: per warp the xor butterfly (lane l adds lane l ^ offset's value,
// offsets 16, 8, 4, 2, 1), then lane 0's partials added in warp order from +0.
std::vector<float> butterfly_sums(const std::vector<float>& in, unsigned threads) {
  std::vector<float> out;
  for (std::size_t block = 0; block < in.size() / threads; ++block) {
    float s = 0;
    for (unsigned warp = 0; warp < threads / 32; ++warp) {
      float v[32];
      for (int l = 0; l < 32; ++l) v[l] = in[block * threads + warp * 32 + l];
      for (int offset = 16; offset > 0; offset /= 2) {
        float next[32];
        for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ offset];
        std::memcpy(v, next, sizeof v);
      }
      s += v[0];
    }
    out.push_back(s);
  }
  return out;
}

// Left to right: the same sums in another order.
std::vector<float> sequential_sums(const std::vector<float>& in, unsigned threads) {
  std::vector<float> out;
  for (std::size_t block = 0; block < in.size() / threads; ++block) {
    float s = 0;
    for (unsigned t = 0; t < threads; ++t) s += in[block * threads + t];
    out.push_back(s);
  }
  return out;
}

// ---- sample_atomic_histogram ----

constexpr unsigned kHistogramThreads = 128, kHistogramBlocks = 64;
constexpr int kBins = 7;

// Integers in [-8, 8]: every partial sum of a bin is an integer below 2^24, exact in any order.
std::vector<float> small_integers(std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<float>(static_cast<int>(i * 13 % 17) - 8);
  return v;
}

// Multiples of 2^-23 in [-1, 1]: no partial sum is subnormal (the GPU's fp32 atomicAdd flushes
// subnormals to zero, the host's std::atomic_ref<float> does not), and sums round.
std::vector<float> random_multiples(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> units(-(1 << 23), 1 << 23);
  std::vector<float> v(count);
  for (float& x : v) x = std::ldexp(static_cast<float>(units(rng)), -23);
  return v;
}

// Bins summed on the host in index order (reverse = false) or the reverse one.
std::vector<float> host_histogram(const std::vector<float>& in, int bin_count, bool reverse) {
  std::vector<float> bins(static_cast<std::size_t>(bin_count), 0.0f);
  for (std::size_t n = 0; n < in.size(); ++n) {
    const std::size_t i = reverse ? in.size() - 1 - n : n;
    bins[i % bin_count] += in[i];
  }
  return bins;
}

// Each bin is a recursive sum of its n addends from +0, in whatever order the schedule gives; any
// order is within gamma_(n-1) * (sum of |x|) of the exact sum, gamma_(n-1) = (n-1)u / (1 - (n-1)u)
// with u = 2^-24 (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., 4.2), so two
// orders within twice that; 2 n u (sum of |x|) covers it for the n here.
std::vector<double> reordering_tolerance(const std::vector<float>& in, int bin_count) {
  std::vector<double> magnitude(static_cast<std::size_t>(bin_count), 0.0), count(magnitude.size(), 0.0);
  for (std::size_t i = 0; i < in.size(); ++i) {
    magnitude[i % bin_count] += std::fabs(double{in[i]});
    count[i % bin_count] += 1;
  }
  std::vector<double> tolerance(magnitude.size());
  for (std::size_t b = 0; b < tolerance.size(); ++b) tolerance[b] = 2 * count[b] * 0x1p-24 * magnitude[b];
  return tolerance;
}

// ================================= on the GPU =================================

TEST(GpuVsEmulator, MatmulOfSmallIntegersIsBitwiseEqual) {
  FLASHPROOF_REQUIRE_GPU();
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
    const MatmulInput in = small_integer_matmul(tag);
    const std::vector<float> emulated = matmul_emulated(in);
    EXPECT_TRUE(bitwise_equal(emulated, exact_product(in))) << name(tag) << ": emulated against the exact product";
    EXPECT_TRUE(bitwise_equal(matmul_gpu(in), emulated)) << name(tag) << ": GPU against emulated";
  }
}

TEST(GpuVsEmulator, MatmulOfRandomValuesIsWithinTheTruncationBound) {
  FLASHPROOF_REQUIRE_GPU();
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
    for (const unsigned seed : {1u, 2u}) {
      const MatmulInput in = random_matmul(tag, seed);
      EXPECT_TRUE(within(matmul_gpu(in), matmul_emulated(in), mma_tolerance(in))) << name(tag) << " seed " << seed;
    }
  }
}

TEST(GpuVsEmulator, BlockSumThroughShufflesIsBitwiseEqual) {
  FLASHPROOF_REQUIRE_GPU();
  for (const unsigned threads : {32u, 128u, 1024u}) {
    const std::vector<float> in = uniform_floats(37 * threads, threads);
    EXPECT_TRUE(bitwise_equal(block_sum_gpu(in, threads), block_sum_emulated(in, threads))) << threads << " threads";
  }
}

TEST(GpuVsEmulator, AtomicHistogramOfIntegersIsBitwiseEqual) {
  FLASHPROOF_REQUIRE_GPU();
  const std::vector<float> in = small_integers(kHistogramBlocks * kHistogramThreads);
  const std::vector<float> gpu = atomic_histogram_gpu(in, kHistogramThreads, kBins);
  EXPECT_TRUE(bitwise_equal(gpu, atomic_histogram_emulated(in, kHistogramThreads, kBins)));
  EXPECT_TRUE(bitwise_equal(gpu, host_histogram(in, kBins, false)));
}

TEST(GpuVsEmulator, AtomicHistogramOfRandomValuesIsWithinTheReorderingBound) {
  FLASHPROOF_REQUIRE_GPU();
  const std::vector<float> in = random_multiples(kHistogramBlocks * kHistogramThreads, 3);
  EXPECT_TRUE(within(atomic_histogram_gpu(in, kHistogramThreads, kBins),
                     atomic_histogram_emulated(in, kHistogramThreads, kBins), reordering_tolerance(in, kBins)));
}

// ============ the comparisons, on deliberately broken emulated results (no GPU) ============

TEST(GpuComparisons, BitwiseRejectsAMatmulOfAChangedInputAndAFlippedBit) {
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
    const MatmulInput in = small_integer_matmul(tag);
    const std::vector<float> emulated = matmul_emulated(in);
    EXPECT_TRUE(bitwise_equal(emulated, exact_product(in))) << name(tag);
    MatmulInput changed = in;
    changed.a[5 * kK + 3] = encode_small_integer(5, tag);  // one element of row 5
    EXPECT_FALSE(bitwise_equal(matmul_emulated(changed), emulated)) << name(tag);
    std::vector<float> flipped = emulated;
    flipped[77] = std::bit_cast<float>(std::bit_cast<std::uint32_t>(flipped[77]) ^ 1u);
    EXPECT_FALSE(bitwise_equal(flipped, emulated)) << name(tag);
  }
  // Where operator== would pass: zeros of opposite signs, and a NaN against itself in within().
  EXPECT_FALSE(bitwise_equal({0.0f, 1.0f}, {-0.0f, 1.0f}));
  EXPECT_FALSE(within({std::nanf("")}, {std::nanf("")}, {1.0}));
}

TEST(GpuComparisons, TruncationBoundAcceptsTruncationAndRejectsWrongProducts) {
  for (const MmaTag tag : {MmaTag::fp16, MmaTag::bf16}) {
    const MatmulInput in = random_matmul(tag, 1);
    const std::vector<float> emulated = matmul_emulated(in);
    const std::vector<double> tolerance = mma_tolerance(in);
    // What the hardware may do: every element several units in the last place toward zero.
    std::vector<float> truncated = emulated;
    for (float& x : truncated)
      for (int step = 0; step < 8; ++step) x = std::nextafter(x, 0.0f);
    EXPECT_TRUE(within(truncated, emulated, tolerance)) << name(tag);
    // What it must not: one row of A negated, the other format's reading of the same bits, one
    // element off by twice the bound.
    MatmulInput negated = in;
    for (int p = 0; p < kK; ++p) negated.a[9 * kK + p] ^= 0x8000;
    EXPECT_FALSE(within(matmul_emulated(negated), emulated, tolerance)) << name(tag);
    MatmulInput other_format = in;
    other_format.tag = tag == MmaTag::fp16 ? MmaTag::bf16 : MmaTag::fp16;
    EXPECT_FALSE(within(matmul_emulated(other_format), emulated, tolerance)) << name(tag);
    std::vector<float> off = emulated;
    off[100] = std::nextafter(static_cast<float>(off[100] + 2 * tolerance[100]), HUGE_VALF);
    EXPECT_FALSE(within(off, emulated, tolerance)) << name(tag);
  }
}

TEST(GpuComparisons, BitwiseRejectsABlockSumInAnotherOrder) {
  const unsigned threads = 128;
  const std::vector<float> in = uniform_floats(37 * threads, threads);
  const std::vector<float> emulated = block_sum_emulated(in, threads);
  EXPECT_TRUE(bitwise_equal(emulated, butterfly_sums(in, threads)));
  EXPECT_FALSE(bitwise_equal(sequential_sums(in, threads), emulated));
}

TEST(GpuComparisons, ReorderingBoundAcceptsOtherOrdersAndRejectsWrongBins) {
  const std::vector<float> in = random_multiples(kHistogramBlocks * kHistogramThreads, 3);
  const std::vector<float> emulated = atomic_histogram_emulated(in, kHistogramThreads, kBins);
  const std::vector<double> tolerance = reordering_tolerance(in, kBins);
  EXPECT_TRUE(within(host_histogram(in, kBins, false), emulated, tolerance));
  EXPECT_TRUE(within(host_histogram(in, kBins, true), emulated, tolerance));
  EXPECT_FALSE(bitwise_equal(host_histogram(in, kBins, false), host_histogram(in, kBins, true)))
      << "the inputs must make the order visible";
  std::vector<float> doubled = in;  // bin 0's inputs counted twice
  for (std::size_t i = 0; i < doubled.size(); i += kBins) doubled[i] *= 2;
  EXPECT_FALSE(within(atomic_histogram_emulated(doubled, kHistogramThreads, kBins), emulated, tolerance));
  const std::vector<float> integers = small_integers(kHistogramBlocks * kHistogramThreads);
  std::vector<float> one_dropped = integers;
  one_dropped[3] = 0;
  EXPECT_FALSE(bitwise_equal(atomic_histogram_emulated(one_dropped, kHistogramThreads, kBins),
                             atomic_histogram_emulated(integers, kHistogramThreads, kBins)));
}

TEST(GpuSupport, TheProbeIsCachedAndGivesAReason) {
  EXPECT_EQ(&gpu_probe(), &gpu_probe());
  EXPECT_FALSE(gpu_probe().reason.empty());
  EXPECT_EQ(gpu_usable(), gpu_probe().usable);
}

}  // namespace
}  // namespace flashproof::tests::samples
