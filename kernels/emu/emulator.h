// The host SIMT emulator (docs/architecture.md, "The emulator"): runs a kernel's own source, compiled
// as C++ for the host, under the CUDA execution model. Under the default schedule blocks run in
// parallel on host threads and the threads of a block are fibers that switch only at
// synchronisation points (__syncthreads, warp collectives), so a block runs deterministically.
// Explored schedules (set_schedule) vary what that order hides. Dynamic shared memory is poisoned
// at block start and every access through kernels/arch/smem.h is checked for bounds and for races
// between barriers. Errors name the kernel, the block and the thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include "kernels/emu/source_site.h"
#include <stdexcept>
#include <string>
#include <type_traits>

namespace flashproof::emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  std::size_t count() const { return std::size_t{x} * y * z; }
};

struct LaunchConfig {
  const char* kernel = "kernel";
  Dim3 grid;
  Dim3 block;
  std::size_t dynamic_smem = 0;
  std::size_t stack_bytes = 256 * 1024;  // per emulated thread
  unsigned host_threads = 0;             // 0: hardware concurrency (set_host_threads overrides)
};

// A violation of the execution model by the kernel: barrier divergence, a warp collective reached
// by a non-converged subset, a shared-memory race or out-of-bounds access, a deadlock. A deadlock is
// seen only as a rendezvous that cannot complete (every live thread of the block waits at a barrier
// or a warp collective, and some lane a collective waits for has exited or waits elsewhere; the
// error names that lane). A thread that spins on memory never yields its fiber, so a kernel that
// spin-waits hangs the emulator whether or not the flag would be set on the GPU. Barrier and
// collective sites are compared by file and line, not column.
struct EmulationError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs body() once per thread of every block. Throws EmulationError on the first violation (the
// lowest block index that failed), or rethrows an exception the kernel body threw.
void launch(const LaunchConfig& config, const std::function<void()>& body);

// ---- what the running thread sees (valid only inside body) ----
Dim3 thread_idx();
Dim3 block_idx();
Dim3 block_dim();
Dim3 grid_dim();
unsigned lane_id();
std::byte* dynamic_smem();
std::size_t dynamic_smem_size();

// __syncthreads: every live thread of the block must reach the same barrier call.
void sync_block(emu::SourceSite site = emu::SourceSite::current());

// Checks an access of `bytes` bytes at p by thread `thread` (default: the running one) to dynamic
// shared memory: in bounds, and no other thread wrote it (or, for a write, read or wrote it) since
// the last barrier. `thread` is a linear thread index within the block.
void check_smem(const void* p, std::size_t bytes, bool write, int thread = -1);

// ---- warp collectives ----
// Every lane in `mask` must call the same collective at the same site. Each deposits its input; the
// last to arrive runs Compute(inputs, outputs, mask) for the whole warp (arrays indexed by lane;
// lanes outside the mask hold zero-initialised values) and every lane gets its output.
inline constexpr std::size_t kSlotBytes = 64;
using SlotCompute = void (*)(const std::byte* in_slots, std::byte* out_slots, std::uint32_t mask);
void warp_collective_raw(const char* kind, emu::SourceSite site, std::uint32_t mask, const void* in,
                         std::size_t in_bytes, void* out, std::size_t out_bytes, SlotCompute compute);

template <class In, class Out, void (*Compute)(const In*, Out*, std::uint32_t)>
void run_on_slots(const std::byte* in_slots, std::byte* out_slots, std::uint32_t mask) {
  In ins[32]{};
  Out outs[32]{};
  for (int l = 0; l < 32; ++l) std::memcpy(&ins[l], in_slots + l * kSlotBytes, sizeof(In));
  Compute(ins, outs, mask);
  for (int l = 0; l < 32; ++l) std::memcpy(out_slots + l * kSlotBytes, &outs[l], sizeof(Out));
}

template <class In, class Out, void (*Compute)(const In*, Out*, std::uint32_t)>
Out warp_collective(const char* kind, emu::SourceSite site, std::uint32_t mask, const In& in) {
  static_assert(std::is_trivially_copyable_v<In> && std::is_trivially_copyable_v<Out>);
  static_assert(sizeof(In) <= kSlotBytes && sizeof(Out) <= kSlotBytes);
  Out out{};
  warp_collective_raw(kind, site, mask, &in, sizeof(In), &out, sizeof(Out), &run_on_slots<In, Out, Compute>);
  return out;
}

// Linear index of the running thread in its block, and of a lane of the running thread's warp.
unsigned linear_thread();
unsigned linear_thread_of_lane(unsigned lane);

// ---- schedules ----
// The schedule of the launches that follow, process-wide. 0, the default: blocks on parallel host
// threads in index order, a block's fibers in thread order, switching only at barriers and warp
// collectives, cp.async copies synchronous. Any other value seeds an explored schedule, the same
// bit for bit on every run and machine: one host thread; a seeded permutation of the blocks, of
// which a seeded number (1 to 8) are resident at once; at every switch a random runnable thread of
// a random resident block runs, and a running thread may be switched out at each scheduling point
// (shared-memory access, cp.async, global atomic; how often is seeded), so warps of a block and
// blocks of a launch interleave between barriers and atomics land in a varying order. cp.async
// copies stay in flight until their thread's cp_async_wait covers them: any access to their bytes
// before that is reported as a race. An error under an explored schedule names its seed.
std::uint64_t schedule();
void set_schedule(std::uint64_t seed);

// Sets the schedule for its lifetime and restores the previous one.
class ScopedSchedule {
 public:
  explicit ScopedSchedule(std::uint64_t seed) : previous_(schedule()) { set_schedule(seed); }
  ~ScopedSchedule() { set_schedule(previous_); }
  ScopedSchedule(const ScopedSchedule&) = delete;
  ScopedSchedule& operator=(const ScopedSchedule&) = delete;

 private:
  std::uint64_t previous_;
};

// Host threads of the default schedule's launches that follow, process-wide. 0, the default: each
// launch's LaunchConfig::host_threads, or the hardware's concurrency where that is 0. 1: blocks run
// one after another in index order, each to its end, so global atomics land in block order; two
// launches whose blocks touching the same data come in the same relative order (a packed batch and
// one of its sequences run alone) then add in the same order, as parallel blocks need not.
unsigned host_threads();
void set_host_threads(unsigned threads);

// Sets the host threads for its lifetime and restores the previous value.
class ScopedHostThreads {
 public:
  explicit ScopedHostThreads(unsigned threads) : previous_(host_threads()) { set_host_threads(threads); }
  ~ScopedHostThreads() { set_host_threads(previous_); }
  ScopedHostThreads(const ScopedHostThreads&) = delete;
  ScopedHostThreads& operator=(const ScopedHostThreads&) = delete;

 private:
  unsigned previous_;
};

// A scheduling point: under an explored schedule the running thread may be switched out here. The
// arch wrappers call it before each shared-memory access, cp.async and global atomic. No effect
// under the default schedule or outside a kernel.
void schedule_point();

// cp.async of 16 bytes (zero-filled when !valid) and its group operations, as kernels/arch/cp_async.h
// runs them on the host.
void cp_async_copy(void* smem_dst, const void* global_src, bool valid);
void cp_async_commit();
void cp_async_wait(int pending);

}  // namespace flashproof::emu
