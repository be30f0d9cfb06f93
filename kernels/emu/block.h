// One emulated block: its threads (each a fiber), their warps' rendezvous, its dynamic shared
// memory and race shadow, the first violation; and the block the calling host thread emulates.
// Internal to the emulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include "kernels/emu/source_site.h"
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/emu/emulator.h"
#include "kernels/emu/fiber_context.h"
#include "kernels/emu/race_shadow.h"
#include "kernels/emu/schedule_rng.h"
#include "kernels/emu/warp_rendezvous.h"

namespace flashproof::emu::detail {

enum class Wait { none, barrier, collective, done };

// A cp.async in flight under an explored schedule: it lands when its thread's wait covers `group`.
struct CopyInFlight {
  std::byte* dst;
  const void* src;
  bool valid;
  int group;
};

// One emulated thread.
struct Fiber {
  FiberContext context;
  Dim3 idx;
  unsigned linear = 0;
  Wait wait = Wait::none;
  emu::SourceSite site;  // of the barrier or collective it waits at
  const char* kind = "";
  std::byte result[kSlotBytes]{};  // its output of the last warp collective
  std::vector<CopyInFlight> copies;  // explored schedules only
  int groups_committed = 0;
};

struct Block {
  const LaunchConfig* config = nullptr;
  const std::function<void()>* body = nullptr;
  Dim3 idx;
  std::vector<Fiber> fibers;
  std::vector<Rendezvous> warps;
  std::vector<std::uint32_t> warp_epochs;  // completed warp collectives per warp
  std::vector<std::byte> smem;
  std::vector<Shadow> shadow;
  std::uint32_t epoch = 1;
  Fiber* current = nullptr;
  std::string error;
  std::exception_ptr exception;
  ScheduleRng* rng = nullptr;       // explored schedules only
  std::uint64_t switch_one_in = 0;  // a scheduling point switches threads with probability 1/this
};

// The block the calling host thread emulates, while it does (set around each turn of a block).
extern constinit thread_local Block* g_block;

inline Block& block() {
  if (!g_block) throw std::logic_error("emulator: CUDA built-in used outside an emulated kernel");
  return *g_block;
}

inline Dim3 unflatten(unsigned linear, const Dim3& dim) {
  return {linear % dim.x, (linear / dim.x) % dim.y, linear / (dim.x * dim.y)};
}

// Makes b the block `block_linear` of the launch, its poisoned shared memory and fresh shadow
// ready and its fibers ready to start on `stacks` (grown as needed).
void start_block(const LaunchConfig& config, const std::function<void()>& body, unsigned block_linear, Block& b,
                 std::vector<char>& stacks);

// From the running thread: back to the block's scheduler.
inline void block_yield() { block().current->context.suspend(); }

// Thrown through the kernel's frames to end a fiber after a violation (kernels use no exceptions).
struct FiberAbort {};

// Records the violation and ends the fiber; the block stops at the scheduler's next turn.
[[noreturn]] void fail(const std::string& what);

}  // namespace flashproof::emu::detail
