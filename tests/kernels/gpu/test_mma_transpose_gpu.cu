// The tensor core itself on docs/error-bounds.md (B1'): S = Q K^T and S^T = K Q^T in the kernels'
// order (ascending k-steps of 16 from a zero accumulator, tests/kernels/transposed_products.h) give
// element (i, j) and element (j, i) the same bits. The host warp model has this by construction
// (ArchMma.TransposedOperandsGiveTheTransposedLogitsBitForBit); the GPU build of the FA2/FA1
// kernels declares AttentionImpl::backward_recomputes_forward_logits only once this passes on the
// device (scripts/gpu-check, stage exp2). The twin: the k-steps in the other order must differ.
// ctest label "gpu": skipped where no GPU can be used.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "tests/gpu_support.h"
#include "tests/kernels/transposed_products.h"

namespace flashproof::tests::transposed {
namespace {

// One warp per trial: forward S and backward S^T (k-steps reversed when `reversed`), as floats.
template <arch::MmaTag kTag>
__global__ void products_kernel(const std::uint16_t* q, const std::uint16_t* k, float* s, float* st, bool reversed) {
  const int trial = blockIdx.x, lane = threadIdx.x;
  const std::uint16_t* qt = q + trial * kRows * kHeadDim;
  const std::uint16_t* kt = k + trial * kRows * kHeadDim;
  for (int n0 = 0; n0 < kRows; n0 += 8) {
    arch::MmaC fwd{}, bwd{};
    for (int step = 0; step < kHeadDim / 16; ++step) {
      const int k0 = 16 * step, k0_t = 16 * (reversed ? kHeadDim / 16 - 1 - step : step);
      fwd = arch::mma_m16n8k16<kTag>(a_fragment(qt, lane, k0), b_fragment(kt, lane, n0, k0), fwd);
      bwd = arch::mma_m16n8k16<kTag>(a_fragment(kt, lane, k0_t), b_fragment(qt, lane, n0, k0_t), bwd);
    }
    store_c(fwd, lane, n0, s + trial * kRows * kRows);
    store_c(bwd, lane, n0, st + trial * kRows * kRows);
  }
}

// Trials whose S and S^T differ somewhere.
template <arch::MmaTag kTag>
int differing_trials(const std::vector<std::uint16_t>& q, const std::vector<std::uint16_t>& k, int trials, bool reversed) {
  const std::size_t in_bytes = q.size() * 2, out_count = static_cast<std::size_t>(trials) * kRows * kRows;
  std::uint16_t *dq = nullptr, *dk = nullptr;
  float *ds = nullptr, *dst = nullptr;
  EXPECT_EQ(cudaMalloc(&dq, in_bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dk, in_bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&ds, out_count * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&dst, out_count * 4), cudaSuccess);
  cudaMemcpy(dq, q.data(), in_bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dk, k.data(), in_bytes, cudaMemcpyHostToDevice);
  products_kernel<kTag><<<trials, 32>>>(dq, dk, ds, dst, reversed);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> s(out_count), st(out_count);
  cudaMemcpy(s.data(), ds, out_count * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(st.data(), dst, out_count * 4, cudaMemcpyDeviceToHost);
  cudaFree(dq), cudaFree(dk), cudaFree(ds), cudaFree(dst);
  int differing = 0;
  for (int t = 0; t < trials; ++t) {
    bool same = true;
    for (int i = 0; i < kRows; ++i)
      for (int j = 0; j < kRows; ++j)
        same = same && std::bit_cast<std::uint32_t>(s[(t * kRows + i) * kRows + j]) ==
                           std::bit_cast<std::uint32_t>(st[(t * kRows + j) * kRows + i]);
    differing += !same;
  }
  return differing;
}

// Finite 16-bit values with exponents in [-band, band] (fp16: bias 15, 10 fraction bits; bf16: 127, 7).
std::uint16_t random_bits(bool bf16, int band, std::mt19937_64& rng) {
  const int fraction_bits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
  const int exponent = -band + static_cast<int>(rng() % (2 * band + 1));
  const std::uint32_t fraction = rng() & ((1u << fraction_bits) - 1);
  return static_cast<std::uint16_t>((rng() & 1 ? 0x8000 : 0) | ((exponent + bias) << fraction_bits) | fraction);
}

TEST(MmaTransposeGpu, TransposedOperandsGiveTheTransposedLogitsBitForBit) {
  FLASHPROOF_REQUIRE_GPU();
  constexpr int kTrials = 4096;
  std::mt19937_64 rng(20261129);
  for (const bool bf16 : {false, true}) {
    std::vector<std::uint16_t> q(static_cast<std::size_t>(kTrials) * kRows * kHeadDim), k(q.size());
    // Trials cycle through exponent bands 3, 12 and (bf16) 40, the last reaching products far
    // below fp32's normal range; in every fourth trial the second half of the head dim repeats the
    // first with the keys negated, so that the last two k-steps cancel the first two exactly.
    for (std::size_t x = 0; x < q.size(); ++x) {
      const std::size_t trial = x / (kRows * kHeadDim);
      const int band = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 12 : (bf16 ? 40 : 14);
      q[x] = random_bits(bf16, band, rng), k[x] = random_bits(bf16, band, rng);
    }
    for (std::size_t t = 0; t < kTrials; t += 4)
      for (int r = 0; r < kRows; ++r)
        for (int col = kHeadDim / 2; col < kHeadDim; ++col) {
          const std::size_t at = (t * kRows + r) * kHeadDim;
          q[at + col] = q[at + col - kHeadDim / 2];
          k[at + col] = static_cast<std::uint16_t>(k[at + col - kHeadDim / 2] ^ 0x8000);
        }
    const auto run = [&](bool reversed) {
      return bf16 ? differing_trials<arch::MmaTag::bf16>(q, k, kTrials, reversed)
                  : differing_trials<arch::MmaTag::fp16>(q, k, kTrials, reversed);
    };
    EXPECT_EQ(run(false), 0) << (bf16 ? "bf16" : "fp16") << ": S^T is not S transposed bit for bit";
    EXPECT_GT(run(true), kTrials / 2) << (bf16 ? "bf16" : "fp16") << ": the twin (k-steps reversed) should differ";
  }
}

}  // namespace
}  // namespace flashproof::tests::transposed
