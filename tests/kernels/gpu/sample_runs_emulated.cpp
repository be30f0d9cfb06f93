// The emulated runs of sample_runs.h: the g++ build of kernels/sample_kernels.h.
#include "tests/kernels/gpu/sample_runs.h"

#include "kernels/sample_kernels.h"

namespace flashproof::tests::samples {

namespace k = kernels::emulated;

std::vector<float> matmul_emulated(const MatmulInput& in) {
  std::vector<float> c(static_cast<std::size_t>(in.m) * in.n);
  k::launch_kernel("sample_matmul", {unsigned(in.m / 64), unsigned(in.n / 16), 1}, {k::kSampleThreads, 1, 1},
                   k::kSampleSmemBytes, k::sample_matmul, in.a.data(), in.b.data(), c.data(), in.n, in.k, in.tag,
                   false);
  return c;
}

std::vector<float> block_sum_emulated(const std::vector<float>& in, unsigned threads) {
  const auto blocks = static_cast<unsigned>(in.size() / threads);
  std::vector<float> out(blocks);
  k::launch_kernel("sample_block_sum", {blocks, 1, 1}, {threads, 1, 1}, threads / 32 * sizeof(float),
                   k::sample_block_sum, in.data(), out.data());
  return out;
}

std::vector<float> atomic_histogram_emulated(const std::vector<float>& in, unsigned threads, int bin_count) {
  std::vector<float> bins(static_cast<std::size_t>(bin_count), 0.0f);
  k::launch_kernel("sample_atomic_histogram", {static_cast<unsigned>(in.size() / threads), 1, 1}, {threads, 1, 1},
                   0, k::sample_atomic_histogram, in.data(), bins.data(), bin_count);
  return bins;
}

}  // namespace flashproof::tests::samples
