// The host SIMT emulator on small CUDA-style kernels: correct kernels give correct results, and each
// broken one (missing barrier, divergent barriers, an exiting thread at a barrier, an out-of-bounds
// shared write, a non-converged shuffle, a warp collective deadlocked against a barrier or an exited
// lane) gives a precise error naming kernel, block and thread; each thread keeps its own
// floating-point control words.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/arch/atomic.h"
#include "kernels/arch/smem.h"
#include "kernels/arch/warp.h"
#include "kernels/sample_kernels.h"
#include "kernels/launch.h"

namespace flashproof::kernels::FP_TARGET {
namespace {

using arch::smem_load;
using arch::smem_store;

// Reads a neighbour's shared value without the barrier between the write and the read.
__global__ void missing_barrier(float* out) {
  float* s = dynamic_smem<float>();
  const unsigned t = threadIdx.x;
  smem_store(&s[t], float(t));
  out[t] = smem_load(&s[(t + 1) % blockDim.x]);
}

__global__ void divergent_barriers(float* out) {
  if (threadIdx.x < 64) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

__global__ void early_exit_before_barrier(float* out) {
  if (threadIdx.x == 5) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void out_of_bounds_shared_write(float* out) {
  float* s = dynamic_smem<float>();
  smem_store(&s[threadIdx.x + (threadIdx.x == 70 ? 64 : 0)], 1.0f);  // 64 floats of shared memory
  out[threadIdx.x] = 1;
}

__global__ void half_warp_shuffle(float* out) {
  float v = float(threadIdx.x);
  if (threadIdx.x % 32 < 16) v = arch::shfl_xor(v, 1);
  __syncthreads();
  out[threadIdx.x] = v;
}

// Deadlocks. Threads are cooperative fibers that switch only at barriers and warp collectives, so
// the emulator sees a deadlock only when every live thread of a block waits at one of those and no
// rendezvous can complete; it then names a thread whose absence blocks a warp collective. (A spin on
// a shared-memory flag never yields: such a kernel hangs the emulator instead.) The lines of the
// blocking call sites are recorded for the exact messages.
// In block (1,0,0) of a 32 x 2 block, the lower half of warp 1 (threads (0..15,1,0)) shuffles while
// the upper half waits at the barrier; every other thread waits at the barrier, block 0 runs cleanly.
constexpr unsigned kShuffleAgainstBarrierLines[2] = {__LINE__ + 3, __LINE__ + 4};
__global__ void shuffle_against_barrier(float* out) {
  float v = float(threadIdx.x);
  if (blockIdx.x == 1 && threadIdx.y == 1 && threadIdx.x < 16) v = arch::shfl_xor(v, 1);
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.y * 32 + threadIdx.x] = v;
}

// Thread 37 (lane 5 of warp 1) returns before a full-warp shuffle that its 31 lanes then wait in.
constexpr unsigned kLaneExitsLine = __LINE__ + 4;
__global__ void lane_exits_before_shuffle(float* out) {
  const unsigned t = threadIdx.x;
  if (t == 37) return;
  out[t] = arch::shfl_xor(float(t), 1);
}

// The twin without the defect: every lane shuffles, then every thread reaches the barrier.
__global__ void converged_shuffle_then_barrier(float* out) {
  float v = arch::shfl_xor(float(threadIdx.x), 1);
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.y * 32 + threadIdx.x] = v;
}

__global__ void read_poison(std::uint32_t* out) {
  out[threadIdx.x] = smem_load(&dynamic_smem<std::uint32_t>()[threadIdx.x]);
}

__global__ void ballot_and_shuffles(std::uint32_t* ballots, float* downs, float* idxs) {
  const unsigned t = threadIdx.x;
  ballots[t] = arch::ballot(t % 3 == 0);
  downs[t] = arch::shfl_down(float(t), 5);
  idxs[t] = arch::shfl_idx(float(t), 7);
}

std::string launch_error(void (*kernel)(float*), const char* name, unsigned threads, std::size_t smem) {
  std::vector<float> out(1024);
  try {
    launch_kernel(name, {2, 1, 1}, {threads, 1, 1}, smem, kernel, out.data());
  } catch (const emu::EmulationError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Emulator, BlockSumWithShufflesAndSharedMemory) {
  const unsigned blocks = 37, threads = 128;
  std::vector<float> in(blocks * threads), out(blocks, -1);
  std::iota(in.begin(), in.end(), 0.0f);
  launch_kernel("block_sum", {blocks, 1, 1}, {threads, 1, 1}, 4 * sizeof(float), sample_block_sum, in.data(),
                out.data());
  for (unsigned b = 0; b < blocks; ++b) {
    float want = 0;
    for (unsigned t = 0; t < threads; ++t) want += in[b * threads + t];
    EXPECT_EQ(out[b], want) << b;  // integers below 2^24: exact in any order
  }
}

TEST(Emulator, MissingBarrierIsARace) {
  const std::string e = launch_error(missing_barrier, "missing_barrier", 64, 64 * sizeof(float));
  // Fibers switch only at synchronisation points, so thread 0 runs first and reads s[1] before
  // thread 1 writes it: the write is the racing access.
  EXPECT_NE(e.find("kernel missing_barrier, block (0,0,0), thread (1,0,0): shared-memory race: thread (1,0,0) "
                   "writes offset 4, read by thread (0,0,0) since the last __syncthreads"), std::string::npos) << e;
}

TEST(Emulator, DivergentBarriers) {
  const std::string e = launch_error(divergent_barriers, "divergent_barriers", 128, 0);
  EXPECT_NE(e.find("kernel divergent_barriers, block (0,0,0), thread (64,0,0): barrier divergence"), std::string::npos) << e;
  EXPECT_NE(e.find("while thread (0,0,0) waits at test_emulator.cpp:"), std::string::npos) << e;
}

TEST(Emulator, ThreadExitingBeforeABarrier) {
  const std::string e = launch_error(early_exit_before_barrier, "early_exit", 64, 0);
  EXPECT_NE(e.find("kernel early_exit, block (0,0,0), thread (5,0,0): barrier divergence: the thread exited"),
            std::string::npos) << e;
}

TEST(Emulator, OutOfBoundsSharedWrite) {
  const std::string e = launch_error(out_of_bounds_shared_write, "oob_write", 64 + 16, 64 * sizeof(float));
  // Threads 64..79 write past the end as well; thread 64 is the first to run.
  EXPECT_NE(e.find("kernel oob_write, block (0,0,0), thread (64,0,0): shared-memory out-of-bounds write of 4 bytes "
                   "at offset 256 (dynamic shared memory is 256 bytes)"), std::string::npos) << e;
}

TEST(Emulator, ShuffleByHalfAWarp) {
  const std::string e = launch_error(half_warp_shuffle, "half_warp", 64, 0);
  EXPECT_NE(e.find("kernel half_warp, block (0,0,0), thread (16,0,0): warp collective shfl.xor at "
                   "test_emulator.cpp:"), std::string::npos) << e;
  EXPECT_NE(e.find("reached by a non-converged subset of mask 0xffffffff: lane 16 (thread (16,0,0)) waits at "
                   "__syncthreads"), std::string::npos) << e;
}

std::string launch_error_2d(void (*kernel)(float*), const char* name, Dim3 block) {
  std::vector<float> out(1024);
  try {
    launch_kernel(name, {2, 1, 1}, block, 0, kernel, out.data());
  } catch (const emu::EmulationError& e) {
    return e.what();
  }
  return "no error";
}

TEST(EmulatorDeadlock, HalfAWarpShufflesWhileTheOtherHalfWaitsAtTheBarrier) {
  const std::string e = launch_error_2d(shuffle_against_barrier, "shuffle_against_barrier", {32, 2, 1});
  // Lane 16 of warp 1 is the first lane the shuffle waits for; it waits at the barrier instead.
  const std::string want = "kernel shuffle_against_barrier, block (1,0,0), thread (16,1,0): warp collective shfl.xor "
                           "at test_emulator.cpp:" + std::to_string(kShuffleAgainstBarrierLines[0]) +
                           " reached by a non-converged subset of mask 0xffffffff: lane 16 (thread (16,1,0)) waits at "
                           "__syncthreads at test_emulator.cpp:" + std::to_string(kShuffleAgainstBarrierLines[1]);
  EXPECT_EQ(e, want);
}

TEST(EmulatorDeadlock, ALaneExitedBeforeAFullWarpShuffle) {
  const std::string e = launch_error(lane_exits_before_shuffle, "lane_exits", 64, 0);
  const std::string want = "kernel lane_exits, block (0,0,0), thread (37,0,0): warp collective shfl.xor at "
                           "test_emulator.cpp:" + std::to_string(kLaneExitsLine) +
                           " reached by a non-converged subset of mask 0xffffffff: lane 5 (thread (37,0,0)) has exited";
  EXPECT_EQ(e, want);
}

TEST(EmulatorDeadlock, TheConvergedTwinRunsCleanly) {
  std::vector<float> out(2 * 64, -1.0f);
  launch_kernel("converged", {2, 1, 1}, {32, 2, 1}, 0, converged_shuffle_then_barrier, out.data());
  for (unsigned i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], float((i % 32) ^ 1)) << i;
}

TEST(Emulator, AtomicsAcrossParallelBlocks) {
  const std::vector<float> ones(200 * 96, 1.0f);
  float counter = 0;
  launch_kernel("count", {200, 1, 1}, {96, 1, 1}, 0, sample_atomic_histogram, ones.data(), &counter, 1);
  EXPECT_EQ(counter, 200.0f * 96.0f);
}

TEST(Emulator, AtomicHistogramOfSmallIntegers) {
  // Integers with every partial sum below 2^24: exact in any order of the additions.
  const unsigned blocks = 64, threads = 128;
  const int bins = 7;
  std::vector<float> in(blocks * threads), got(bins, 0.0f), want(bins, 0.0f);
  for (std::size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<float>(static_cast<int>(i * 13 % 17) - 8);
    want[i % bins] += in[i];
  }
  launch_kernel("histogram", {blocks, 1, 1}, {threads, 1, 1}, 0, sample_atomic_histogram, in.data(), got.data(), bins);
  EXPECT_EQ(got, want);
}

// Thread 0 of each block takes the next ticket from an fp32 counter (exact below 2^24) and writes
// its block index at that ticket.
__global__ void tickets_in_arrival_order(float* counter, int* order) {
  if (threadIdx.x != 0) return;
  order[static_cast<int>(arch::atomic_add(counter, 1.0f))] = static_cast<int>(blockIdx.x);
}

std::vector<int> ticket_order(unsigned blocks) {
  std::vector<int> order(blocks, -1);
  float counter = 0;
  launch_kernel("tickets", {blocks, 1, 1}, {64, 1, 1}, 0, tickets_in_arrival_order, &counter, order.data());
  return order;
}

TEST(EmulatorHostThreads, OneHostThreadLandsAtomicsInBlockOrder) {
  const unsigned blocks = 96;
  std::vector<int> index_order(blocks);
  std::iota(index_order.begin(), index_order.end(), 0);
  {
    emu::ScopedHostThreads one(1);
    EXPECT_EQ(emu::host_threads(), 1u);
    EXPECT_EQ(ticket_order(blocks), index_order);
    // The twin: blocks in another order (an explored schedule's permutation) are told apart.
    emu::ScopedSchedule permuted(1);
    EXPECT_NE(ticket_order(blocks), index_order);
  }
  EXPECT_EQ(emu::host_threads(), 0u);  // the scope restored the default
}

TEST(Emulator, SharedMemoryStartsPoisoned) {
  std::vector<std::uint32_t> out(32);
  launch_kernel("poison", {1, 1, 1}, {32, 1, 1}, 32 * 4, read_poison, out.data());
  for (auto w : out) EXPECT_EQ(w, 0x7fa00000u);
}

TEST(Emulator, BallotAndShuffleSemantics) {
  std::vector<std::uint32_t> ballots(64);
  std::vector<float> downs(64), idxs(64);
  launch_kernel("votes", {1, 1, 1}, {64, 1, 1}, 0, ballot_and_shuffles, ballots.data(), downs.data(), idxs.data());
  for (unsigned t = 0; t < 64; ++t) {
    std::uint32_t want = 0;
    for (unsigned l = 0; l < 32; ++l) want |= ((t / 32 * 32 + l) % 3 == 0) ? 1u << l : 0u;
    EXPECT_EQ(ballots[t], want) << t;
    EXPECT_EQ(downs[t], float(t % 32 + 5 < 32 ? t + 5 : t)) << t;
    EXPECT_EQ(idxs[t], float(t / 32 * 32 + 7)) << t;
  }
}

// The floating-point control words belong to each emulated thread (kernels/emu/fiber_context.h):
// a thread that changes its rounding mode keeps it across the switches at a barrier and changes
// neither the other threads' nor the launching thread's. Odd threads round upward; after the
// barrier every thread adds 2^-30 to 1 (float arithmetic: MXCSR) and reads its mode (glibc's
// fegetround: the x87 control word).
__global__ void odd_threads_round_upward(float* sums, int* modes) {
  if (threadIdx.x % 2 == 1) std::fesetround(FE_UPWARD);
  __syncthreads();
  volatile float one = 1.0f, tiny = 0x1p-30f;
  sums[threadIdx.x] = one + tiny;
  modes[threadIdx.x] = std::fegetround();
}

// Records the mode each thread starts in and subtracts 2^-30 from 1 in it.
__global__ void starting_rounding(float* differences, int* modes) {
  volatile float one = 1.0f, tiny = 0x1p-30f;
  differences[threadIdx.x] = one - tiny;
  modes[threadIdx.x] = std::fegetround();
}

TEST(EmulatorFloatingPointControl, EachThreadKeepsItsOwnRoundingMode) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  const unsigned threads = 64;
  std::vector<float> sums(threads);
  std::vector<int> modes(threads);
  launch_kernel("odd_threads_round_upward", {1, 1, 1}, {threads, 1, 1}, 0, odd_threads_round_upward, sums.data(),
                modes.data());
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  for (unsigned t = 0; t < threads; ++t) {
    const bool upward = t % 2 == 1;
    EXPECT_EQ(modes[t], upward ? FE_UPWARD : FE_TONEAREST) << t;
    EXPECT_EQ(sums[t], upward ? std::nextafter(1.0f, 2.0f) : 1.0f) << t;
  }
}

TEST(EmulatorFloatingPointControl, ThreadsStartInTheLaunchingThreadsMode) {
  const unsigned threads = 64;  // one block: emulated on the launching thread
  std::vector<float> differences(threads);
  std::vector<int> modes(threads);
  ASSERT_EQ(std::fesetround(FE_DOWNWARD), 0);
  launch_kernel("starting_rounding", {1, 1, 1}, {threads, 1, 1}, 0, starting_rounding, differences.data(),
                modes.data());
  std::fesetround(FE_TONEAREST);
  for (unsigned t = 0; t < threads; ++t) {
    EXPECT_EQ(modes[t], FE_DOWNWARD) << t;
    EXPECT_EQ(differences[t], std::nextafter(1.0f, 0.0f)) << t;
  }
}

TEST(Emulator, KernelExceptionsPropagate) {
  EXPECT_THROW(launch_kernel("bad_block", {1, 1, 1}, {2000, 1, 1}, 0, sample_atomic_histogram, (const float*)nullptr,
                            (float*)nullptr, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace flashproof::kernels::FP_TARGET

// ---- the tiled matrix product through cp.async, ldmatrix and mma (kernels/sample_kernels.h) ----
namespace flashproof::kernels::FP_TARGET {
namespace {

struct MatmulCase {
  int m = 128, n = 32, k = 64;
  std::vector<std::uint16_t> a, b;  // b stored [n][k]
  std::vector<float> want;
};

// Small integers, exact in fp16 and bf16 and in every fp32 partial sum, so the product is exact
// whatever the summation order: the emulated result must equal the plain loop bitwise.
MatmulCase make_case(arch::MmaTag tag) {
  MatmulCase c;
  const auto encode = [&](int v) -> std::uint16_t {
    const float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (tag == arch::MmaTag::bf16) return static_cast<std::uint16_t>(bits >> 16);
    // fp16 of a small integer: sign, exponent rebias 127 -> 15, top 10 mantissa bits.
    if (v == 0) return 0;
    const std::uint32_t sign = bits >> 31, exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffff;
    return static_cast<std::uint16_t>((sign << 15) | ((exponent - 112) << 10) | (mantissa >> 13));
  };
  std::vector<int> a(c.m * c.k), b(c.n * c.k);
  for (int i = 0; i < c.m * c.k; ++i) a[i] = (i * 7 + 3) % 9 - 4;
  for (int i = 0; i < c.n * c.k; ++i) b[i] = (i * 5 + 1) % 7 - 3;
  for (int v : a) c.a.push_back(encode(v));
  for (int v : b) c.b.push_back(encode(v));
  c.want.assign(c.m * c.n, 0.0f);
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j)
      for (int p = 0; p < c.k; ++p) c.want[i * c.n + j] += static_cast<float>(a[i * c.k + p] * b[j * c.k + p]);
  return c;
}

TEST(EmulatorMma, TiledMatmulThroughCpAsyncLdmatrixAndMma) {
  for (const auto tag : {arch::MmaTag::fp16, arch::MmaTag::bf16}) {
    const MatmulCase c = make_case(tag);
    std::vector<float> got(c.m * c.n, -1.0f);
    launch_kernel("sample_matmul", {unsigned(c.m / 64), unsigned(c.n / 16), 1}, {kSampleThreads, 1, 1},
                  kSampleSmemBytes, sample_matmul, c.a.data(), c.b.data(), got.data(), c.n, c.k, tag, false);
    EXPECT_EQ(got, c.want);
  }
}

TEST(EmulatorMma, MatmulWithoutTheSecondBarrierRaces) {
  const MatmulCase c = make_case(arch::MmaTag::fp16);
  std::vector<float> got(c.m * c.n);
  try {
    launch_kernel("sample_matmul", {unsigned(c.m / 64), unsigned(c.n / 16), 1}, {kSampleThreads, 1, 1},
                  kSampleSmemBytes, sample_matmul, c.a.data(), c.b.data(), got.data(), c.n, c.k,
                  arch::MmaTag::fp16, true);
    ADD_FAILURE() << "no error";
  } catch (const emu::EmulationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel sample_matmul, block (0,0,0), thread"), std::string::npos) << what;
    EXPECT_NE(what.find("shared-memory race"), std::string::npos) << what;
    EXPECT_NE(what.find("writes offset"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace flashproof::kernels::FP_TARGET
