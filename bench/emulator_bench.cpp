// The emulator's cost: the tiled matrix product of kernels/sample_kernels.h (cp.async, ldmatrix,
// mma, barriers) emulated, against a plain host loop doing the same arithmetic (the same exact
// m16n8k16 model per 16-wide slice of K, without threads, fibers or checks). Side by side, one run;
// each side the best of 3 runs under Google Benchmark.
#include <bit>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench/benchmark_runs.h"
#include "bench/command_line.h"
#include "kernels/arch/exact_sum.h"
#include "kernels/arch/half_bits.h"
#include "kernels/sample_kernels.h"

namespace fk = flashproof::kernels::emulated;
namespace arch = flashproof::arch;

namespace {

// Each side is the best of this many runs (Google Benchmark): the machine is shared.
constexpr int kRuns = 3;

// C = A B^T per 16-wide slice: c = round(c + sum of 16 exact products), as the host mma model does.
void plain_matmul(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b, std::vector<float>& c,
                  int m, int n, int k) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0;
      for (int k0 = 0; k0 < k; k0 += 16) {
        arch::ExactFp32Sum sum;
        sum.add(arch::decode(std::bit_cast<std::uint32_t>(acc), arch::kFp32Format));
        for (int p = k0; p < k0 + 16; ++p)
          sum.add_product(arch::decode(a[i * k + p], arch::kFp16Format), arch::decode(b[j * k + p], arch::kFp16Format));
        acc = sum.round_to_fp32();
      }
      c[i * n + j] = acc;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  flashproof::bench::parse_no_options_or_exit(
      "The emulator's cost: a tiled 256x64x256 fp16 matrix product emulated on 1 and 2 host threads, "
      "against a plain host loop doing the same arithmetic; exit status 1 if the results differ.",
      "bench_emulator", argc, argv);
  const int m = 256, n = 64, k = 256;
  std::vector<std::uint16_t> a(m * k), b(n * k);
  for (int i = 0; i < m * k; ++i) a[i] = static_cast<std::uint16_t>(0x3c00 + (i * 37) % 512);  // [1, 1.5)
  for (int i = 0; i < n * k; ++i) b[i] = static_cast<std::uint16_t>(0xbc00 + (i * 11) % 512);
  std::vector<float> emulated(m * n), plain(m * n);
  for (unsigned threads : {1u, 2u}) {
    flashproof::emu::LaunchConfig config;
    config.kernel = "sample_matmul";
    config.grid = {unsigned(m / 64), unsigned(n / 16), 1};
    config.block = {fk::kSampleThreads, 1, 1};
    config.dynamic_smem = fk::kSampleSmemBytes;
    config.host_threads = threads;
    const double t_emulated = flashproof::bench::least_seconds("emulated matmul", kRuns, [&] {
      flashproof::emu::launch(config, [&] {
        fk::sample_matmul(a.data(), b.data(), emulated.data(), n, k, arch::MmaTag::fp16, false);
      });
    });
    const double t_plain = flashproof::bench::least_seconds("plain matmul", kRuns, [&] { plain_matmul(a, b, plain, m, n, k); });
    const bool same = std::memcmp(emulated.data(), plain.data(), plain.size() * sizeof(float)) == 0;
    std::printf("matmul %dx%dx%d fp16, emulator on %u host thread(s): emulated %.3f s, plain loop %.3f s, "
                "ratio %.1fx, results %s\n",
                m, n, k, threads, t_emulated, t_plain, t_emulated / t_plain, same ? "bitwise equal" : "DIFFER");
    if (!same) return 1;
  }
  return 0;
}
