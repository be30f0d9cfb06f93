// The emulator's explored schedules (kernels/emu/emulator.h, set_schedule): each is reproducible
// bit for bit; together they vary the order of atomics; they find what the default schedule's fixed
// order hides (a missing barrier before a hand-off through global memory, a cp.async read before
// its wait) while the twins with the barrier and the wait pass under every one; and the checks of
// the default schedule (shared-memory races, barrier divergence) still hold under them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/arch/atomic.h"
#include "kernels/arch/cp_async.h"
#include "kernels/arch/smem.h"
#include "kernels/sample_kernels.h"
#include "kernels/launch.h"

namespace flashproof::kernels::FP_TARGET {
namespace {

constexpr unsigned kThreads = 128;
constexpr std::uint64_t kExplored[] = {1, 2, 3, 4, 5, 6, 7, 8};

// Thread t hands t + 1 to thread t + 1 through global memory. Without the barrier, the default
// schedule still gets it right: it runs the block's threads one after another in thread order, so
// every write comes before the read of it.
__global__ void global_handoff(float* scratch, float* out, bool with_barrier) {
  const unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
  scratch[base + t] = float(t + 1);
  if (with_barrier) __syncthreads();
  out[base + t] = t == 0 ? 0.0f : scratch[base + t - 1];
}

// Thread t copies 16 bytes with cp.async into its slot, then reads its neighbour's slot after the
// barrier. Without the wait the copy may not have landed on the GPU; the default schedule's copies
// are synchronous, so it cannot tell.
__global__ void cp_async_handoff(const float* in, float* out, bool with_wait) {
  float* s = dynamic_smem<float>();
  const unsigned t = threadIdx.x, n = blockDim.x;
  arch::cp_async_16(&s[4 * t], &in[4 * t]);
  arch::cp_async_commit();
  if (with_wait) arch::cp_async_wait<0>();
  __syncthreads();
  out[blockIdx.x * n + t] = arch::smem_load(&s[4 * ((t + 1) % n)]);
}

__global__ void exit_before_barrier(float* out) {
  if (threadIdx.x == 5) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

bool handoff_correct(bool with_barrier, unsigned blocks = 3) {
  std::vector<float> scratch(blocks * kThreads, -1.0f), out(blocks * kThreads, -1.0f);
  launch_kernel("global_handoff", {blocks, 1, 1}, {kThreads, 1, 1}, 0, global_handoff, scratch.data(), out.data(),
                with_barrier);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < kThreads; ++t)
      if (out[b * kThreads + t] != float(t)) return false;
  return true;
}

// The error of a cp_async_handoff launch, or "" with the result checked.
std::string cp_async_error(bool with_wait) {
  const unsigned blocks = 2;
  std::vector<float> in(4 * kThreads), out(blocks * kThreads, -1.0f);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i);
  try {
    launch_kernel("cp_async_handoff", {blocks, 1, 1}, {kThreads, 1, 1}, 4 * kThreads * sizeof(float), cp_async_handoff,
                  in.data(), out.data(), with_wait);
  } catch (const emu::EmulationError& e) {
    return e.what();
  }
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < kThreads; ++t)
      EXPECT_EQ(out[b * kThreads + t], float(4 * ((t + 1) % kThreads))) << b << " " << t;
  return "";
}

TEST(EmulatorSchedules, DefaultIsZeroAndScopesRestore) {
  EXPECT_EQ(emu::schedule(), 0u);
  {
    const emu::ScopedSchedule outer(5);
    EXPECT_EQ(emu::schedule(), 5u);
    {
      const emu::ScopedSchedule inner(9);
      EXPECT_EQ(emu::schedule(), 9u);
    }
    EXPECT_EQ(emu::schedule(), 5u);
  }
  EXPECT_EQ(emu::schedule(), 0u);
}

TEST(EmulatorSchedules, TheFixedOrderHidesAMissingBarrierThatExploredSchedulesFind) {
  EXPECT_TRUE(handoff_correct(false)) << "the default schedule was expected to hide the missing barrier";
  int found = 0;
  for (const std::uint64_t seed : kExplored) {
    const emu::ScopedSchedule explored(seed);
    EXPECT_TRUE(handoff_correct(true)) << "with the barrier, schedule " << seed;
    found += !handoff_correct(false);
  }
  EXPECT_GE(found, 6) << "of " << std::size(kExplored) << " explored schedules";
}

TEST(EmulatorSchedules, ACpAsyncReadBeforeItsWaitIsARace) {
  EXPECT_EQ(cp_async_error(false), "") << "the default schedule's copies are synchronous";
  EXPECT_EQ(cp_async_error(true), "");
  for (const std::uint64_t seed : kExplored) {
    const emu::ScopedSchedule explored(seed);
    EXPECT_EQ(cp_async_error(true), "") << "schedule " << seed;
    const std::string e = cp_async_error(false);
    EXPECT_NE(e.find("kernel cp_async_handoff, block ("), std::string::npos) << e;
    EXPECT_NE(e.find("shared-memory race: thread ("), std::string::npos) << e;
    EXPECT_NE(e.find("to it is in flight (missing cp.async.wait_group?) (under schedule " + std::to_string(seed) + ")"),
              std::string::npos)
        << e;
  }
}

TEST(EmulatorSchedules, AtomicsLandInAScheduledOrderThatEachSeedReproduces) {
  // Values whose fp32 sums depend on the order of the additions: 1.5 added to +-2^27 is lost.
  const unsigned blocks = 16;
  std::vector<float> in(blocks * kThreads);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = i % 3 == 0 ? 0x1p27f : i % 3 == 1 ? -0x1p27f : 1.5f;
  const auto sum = [&](std::uint64_t seed) {
    const emu::ScopedSchedule explored(seed);
    float bin = 0;
    launch_kernel("histogram", {blocks, 1, 1}, {kThreads, 1, 1}, 0, sample_atomic_histogram, in.data(), &bin, 1);
    std::uint32_t bits;
    std::memcpy(&bits, &bin, 4);
    return bits;
  };
  std::vector<std::uint32_t> sums;
  for (const std::uint64_t seed : kExplored) sums.push_back(sum(seed));
  for (std::size_t i = 0; i < sums.size(); ++i) EXPECT_EQ(sum(kExplored[i]), sums[i]) << "schedule " << kExplored[i];
  std::sort(sums.begin(), sums.end());
  EXPECT_GE(std::unique(sums.begin(), sums.end()) - sums.begin(), 2) << "every schedule added in the same order";
}

TEST(EmulatorSchedules, TheDefaultChecksHoldUnderExploredSchedules) {
  for (const std::uint64_t seed : kExplored) {
    const emu::ScopedSchedule explored(seed);
    std::vector<float> out(kThreads);
    try {
      launch_kernel("exit_before_barrier", {2, 1, 1}, {kThreads, 1, 1}, 0, exit_before_barrier, out.data());
      ADD_FAILURE() << "no error under schedule " << seed;
    } catch (const emu::EmulationError& e) {
      EXPECT_NE(std::string(e.what()).find("barrier divergence"), std::string::npos) << e.what();
    }
    // The tiled product through cp.async, ldmatrix and mma: exact small integers, so every
    // schedule must give the plain loop's result; without its second barrier it races.
    const int m = 128, n = 32, k = 64;
    std::vector<std::uint16_t> a(m * k), b(n * k);
    std::vector<float> want(m * n, 0.0f), got(m * n, -1.0f);
    for (int i = 0; i < m * k; ++i) a[i] = static_cast<std::uint16_t>(0x3c00 + ((i * 7) % 3) * 0x400);  // 1, 2, 4
    for (int i = 0; i < n * k; ++i) b[i] = static_cast<std::uint16_t>(0x3c00 + ((i * 5) % 2) * 0x400);  // 1, 2
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p)
          want[i * n + j] += float(1 << ((i * k + p) * 7 % 3)) * float(1 << ((j * k + p) * 5 % 2));
    const auto run = [&](bool skip_second_barrier) {
      launch_kernel("sample_matmul", {unsigned(m / 64), unsigned(n / 16), 1}, {kSampleThreads, 1, 1}, kSampleSmemBytes,
                    sample_matmul, a.data(), b.data(), got.data(), n, k, arch::MmaTag::fp16, skip_second_barrier);
    };
    run(false);
    EXPECT_EQ(got, want) << "schedule " << seed;
    EXPECT_THROW(run(true), emu::EmulationError) << "schedule " << seed;
  }
}

}  // namespace
}  // namespace flashproof::kernels::FP_TARGET
