#include "kernels/emu/emulator.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "kernels/emu/fiber_context.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define FP_ASAN 1
#endif

namespace flashproof::emu {
namespace {

enum class Wait { none, barrier, collective, done };

// A cp.async in flight under an explored schedule: it lands when its thread's wait covers `group`.
struct CopyInFlight {
  std::byte* dst;
  const void* src;
  bool valid;
  int group;
};

// The seeded generator of an explored schedule (splitmix64: the same stream on every machine).
struct ScheduleRng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // n > 0; the bias is irrelevant here
};

struct Fiber {
  FiberContext context;
  Dim3 idx;
  unsigned linear = 0;
  Wait wait = Wait::none;
  std::source_location site;  // of the barrier or collective it waits at
  const char* kind = "";
  std::byte result[kSlotBytes]{};  // its output of the last warp collective
  std::vector<CopyInFlight> copies;  // explored schedules only
  int groups_committed = 0;
};

struct Rendezvous {
  bool open = false;
  const char* kind = "";
  std::source_location site;
  std::uint32_t mask = 0;
  std::uint32_t arrived = 0;
  std::byte in[32 * kSlotBytes]{};
  std::byte out[32 * kSlotBytes]{};
};

// Who last wrote and read each byte of shared memory, in which barrier epoch, and at which warp
// epoch of the accessing warp (a completed warp collective orders the accesses of its lanes, as
// the .sync instructions do on the GPU).
struct Shadow {
  std::uint32_t write_epoch = 0;
  std::uint32_t read_epoch = 0;
  std::uint32_t writer = 0;
  std::uint32_t reader = 0;       // kManyReaders when several threads read
  std::uint32_t reader_warp = 0;  // kManyWarps when readers came from several warps
  std::uint32_t writer_warp_epoch = 0;
  std::uint32_t reader_warp_epoch = 0;  // the latest, over all readers
  std::uint32_t copy_in_flight = 0;     // 1 + the thread whose cp.async to the byte has not landed
};
constexpr std::uint32_t kManyReaders = 0xffffffffu;
constexpr std::uint32_t kManyWarps = 0xffffffffu;

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
  FiberContext scheduler;
  Fiber* current = nullptr;
  std::string error;
  std::exception_ptr exception;
  ScheduleRng* rng = nullptr;       // explored schedules only
  std::uint64_t switch_one_in = 0;  // a scheduling point switches threads with probability 1/this
};

thread_local Block* g_block = nullptr;
std::atomic<std::uint64_t> g_schedule{0};

// Stack switches, announced to AddressSanitizer when it is on (it otherwise reports false
// positives on fiber stacks).
#if FP_ASAN
thread_local const void* g_scheduler_stack = nullptr;
thread_local std::size_t g_scheduler_stack_size = 0;
#endif

void switch_to_fiber(FiberContext& from, FiberContext& to) {
#if FP_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, to.stack(), to.stack_size());
  from.switch_to(to);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  from.switch_to(to);
#endif
}

// From a fiber back to its block's scheduler; `leaving` when the fiber will not be resumed.
void switch_to_scheduler(FiberContext& from, FiberContext& to, bool leaving) {
#if FP_ASAN
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(leaving ? nullptr : &fake, g_scheduler_stack, g_scheduler_stack_size);
  from.switch_to(to);
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
  (void)leaving;
  from.switch_to(to);
#endif
}

// First thing a fiber does: complete the switch that started it.
void fiber_started() {
#if FP_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &g_scheduler_stack, &g_scheduler_stack_size);
#endif
}

// Whether two call sites' texts (kind, file name) are equal: one call site always passes the same
// pointers, so the comparison of the characters is left for the rare mismatch.
bool same_text(const char* a, const char* b) { return a == b || std::strcmp(a, b) == 0; }

Block& block() {
  if (!g_block) throw std::logic_error("emulator: CUDA built-in used outside an emulated kernel");
  return *g_block;
}

std::string text(const Dim3& d) {
  std::ostringstream os;
  os << "(" << d.x << "," << d.y << "," << d.z << ")";
  return os.str();
}

std::string text(const std::source_location& s) {
  std::string file = s.file_name();
  if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(s.line());
}

Dim3 unflatten(unsigned linear, const Dim3& dim) {
  return {linear % dim.x, (linear / dim.x) % dim.y, linear / (dim.x * dim.y)};
}

std::string thread_text(const Block& b, unsigned linear) {
  return "thread " + text(unflatten(linear, b.config->block));
}

std::string where(const Block& b, unsigned linear) {
  return std::string("kernel ") + b.config->kernel + ", block " + text(b.idx) + ", " + thread_text(b, linear);
}

// Thrown through the kernel's frames to end a fiber after a violation (kernels use no exceptions).
struct FiberAbort {};

// Records the violation and ends the fiber; the block stops at the scheduler's next turn.
[[noreturn]] void fail(const std::string& what) {
  Block& b = block();
  if (b.error.empty()) b.error = where(b, b.current->linear) + ": " + what;
  throw FiberAbort{};
}

void fiber_entry() {
  fiber_started();
  Block& b = *g_block;
  try {
    (*b.body)();
  } catch (const FiberAbort&) {
    // b.error holds the violation
  } catch (...) {
    if (!b.exception) b.exception = std::current_exception();
  }
  b.current->wait = Wait::done;
  switch_to_scheduler(b.current->context, b.scheduler, true);
}

void block_yield() {
  Block& b = block();
  switch_to_scheduler(b.current->context, b.scheduler, false);
}

// Describes why no thread can proceed; called when every live thread waits.
std::string stuck_reason(const Block& b, unsigned& culprit) {
  for (std::size_t w = 0; w < b.warps.size(); ++w) {
    const Rendezvous& r = b.warps[w];
    if (!r.open) continue;
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (!((r.mask >> lane) & 1u) || ((r.arrived >> lane) & 1u)) continue;
      const unsigned linear = static_cast<unsigned>(w) * 32 + lane;
      const Fiber& f = b.fibers[linear];
      std::ostringstream os;
      os << "warp collective " << r.kind << " at " << text(r.site) << " reached by a non-converged subset of mask 0x"
         << std::hex << r.mask << std::dec << ": lane " << lane << " ("
         << thread_text(b, linear) << ") ";
      if (f.wait == Wait::done) os << "has exited";
      else if (f.wait == Wait::barrier) os << "waits at __syncthreads at " << text(f.site);
      else os << "waits at " << f.kind << " at " << text(f.site);
      culprit = linear;
      return os.str();
    }
  }
  culprit = 0;
  return "deadlock: no thread can proceed";
}

// Releases the barrier if every live thread waits at the same one; otherwise names the divergence.
bool release_barrier(Block& b) {
  const Fiber* first = nullptr;
  for (const Fiber& f : b.fibers) {
    if (f.wait == Wait::barrier) {
      first = &f;
      break;
    }
  }
  if (!first) return false;
  for (const Fiber& f : b.fibers) {
    if (f.wait == Wait::done) {
      b.error = where(b, f.linear) + ": barrier divergence: the thread exited while " + thread_text(b, first->linear) +
                " waits at __syncthreads at " + text(first->site);
      return false;
    }
    if (f.wait == Wait::barrier && (f.site.line() != first->site.line() ||
                                    !same_text(f.site.file_name(), first->site.file_name()))) {
      b.error = where(b, f.linear) + ": barrier divergence: the thread waits at __syncthreads at " + text(f.site) +
                " while " + thread_text(b, first->linear) + " waits at " + text(first->site);
      return false;
    }
  }
  for (Fiber& f : b.fibers) f.wait = Wait::none;
  ++b.epoch;
  return true;
}

void run_block(Block& b) {
  for (;;) {
    bool ran = false;
    for (Fiber& f : b.fibers) {
      if (f.wait != Wait::none) continue;
      b.current = &f;
      switch_to_fiber(b.scheduler, f.context);
      ran = true;
      if (!b.error.empty() || b.exception) return;
    }
    if (std::all_of(b.fibers.begin(), b.fibers.end(), [](const Fiber& f) { return f.wait == Wait::done; })) return;
    if (ran) continue;
    const bool any_collective =
        std::any_of(b.fibers.begin(), b.fibers.end(), [](const Fiber& f) { return f.wait == Wait::collective; });
    if (!any_collective && release_barrier(b)) continue;
    if (!b.error.empty()) return;
    unsigned culprit = 0;
    const std::string reason = stuck_reason(b, culprit);
    b.error = where(b, culprit) + ": " + reason;
    return;
  }
}

// What a host thread needs to emulate blocks: the fiber stacks and the block's arrays. Workers are
// kept in a pool across launches, so that once grown they allocate nothing and touch no fresh page
// (a fresh block's shadow memory alone is 32 bytes per byte of shared memory, and the kernel would
// otherwise map and fault it in for every block).
struct Worker {
  std::vector<char> stacks;
  Block block;
};

std::mutex g_pool_mutex;
std::vector<std::unique_ptr<Worker>> g_pool;

std::unique_ptr<Worker> take_worker() {
  const std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_pool.empty()) return std::make_unique<Worker>();
  std::unique_ptr<Worker> w = std::move(g_pool.back());
  g_pool.pop_back();
  return w;
}

void give_back(std::unique_ptr<Worker> w) {
  const std::lock_guard<std::mutex> lock(g_pool_mutex);
  g_pool.push_back(std::move(w));
}

// Makes worker.block the block `block_linear` of the launch, its fibers ready to start.
void start_block(const LaunchConfig& config, const std::function<void()>& body, unsigned block_linear,
                 Worker& worker) {
  Block& b = worker.block;  // every field is reset here: nothing leaks from the previous block
  b.config = &config;
  b.body = &body;
  b.idx = unflatten(block_linear, config.grid);
  const std::size_t threads = config.block.count();
  b.fibers.assign(threads, Fiber{});
  b.warps.assign((threads + 31) / 32, Rendezvous{});
  b.warp_epochs.assign(b.warps.size(), 0);
  b.smem.resize(config.dynamic_smem);
  // Poison: every 32-bit word holds the fp32 signalling NaN 0x7fa00000.
  for (std::size_t i = 0; i + 4 <= b.smem.size(); i += 4) {
    const std::uint32_t poison = 0x7fa00000u;
    std::memcpy(&b.smem[i], &poison, 4);
  }
  b.shadow.assign(config.dynamic_smem, Shadow{});
  b.epoch = 1;
  b.scheduler = FiberContext{};
  b.current = nullptr;
  b.error.clear();
  b.exception = nullptr;
  b.rng = nullptr;
  b.switch_one_in = 0;
  const std::size_t stack = config.stack_bytes;
  if (worker.stacks.size() < threads * stack) worker.stacks.resize(threads * stack);
  for (unsigned t = 0; t < threads; ++t) {
    b.fibers[t].linear = t;
    b.fibers[t].idx = unflatten(t, config.block);
    b.fibers[t].context.start_on(worker.stacks.data() + t * stack, stack, fiber_entry);
  }
}

void emulate_block(const LaunchConfig& config, const std::function<void()>& body, unsigned block_linear,
                   Worker& worker, std::string& error, std::exception_ptr& exception) {
  start_block(config, body, block_linear, worker);
  Block& b = worker.block;
  g_block = &b;
  run_block(b);
  g_block = nullptr;
  error = b.error;
  exception = b.exception;
  b.exception = nullptr;  // the pool must not keep a kernel's exception alive
}

// ---- explored schedules ----

enum class Step { running, finished, failed };

// One turn of a block under an explored schedule: a random runnable thread runs until it next
// waits, exits or is switched out at a scheduling point; with none runnable, the barrier all wait
// at is released (or the block is stuck).
Step step_block(Block& b) {
  if (!b.error.empty() || b.exception) return Step::failed;
  // The first runnable thread from a random one on (not uniform, but every runnable thread can be
  // picked, and a turn costs little more than a switch while most threads are runnable).
  const std::size_t n = b.fibers.size(), start = b.rng->below(n);
  for (std::size_t k = 0; k < n; ++k) {
    Fiber& f = b.fibers[(start + k) % n];
    if (f.wait != Wait::none) continue;
    b.current = &f;
    switch_to_fiber(b.scheduler, f.context);
    return !b.error.empty() || b.exception ? Step::failed : Step::running;
  }
  if (std::all_of(b.fibers.begin(), b.fibers.end(), [](const Fiber& f) { return f.wait == Wait::done; }))
    return Step::finished;
  const bool any_collective =
      std::any_of(b.fibers.begin(), b.fibers.end(), [](const Fiber& f) { return f.wait == Wait::collective; });
  if (!any_collective && release_barrier(b)) return Step::running;
  if (b.error.empty()) {
    unsigned culprit = 0;
    const std::string reason = stuck_reason(b, culprit);
    b.error = where(b, culprit) + ": " + reason;
  }
  return Step::failed;
}

// Seeds a launch's schedule from the schedule and the kernel's name and grid, so that each kernel
// of a sequence (forward, or the backward's three) gets its own stream.
std::uint64_t launch_seed(std::uint64_t schedule, const LaunchConfig& config) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (const char* c = config.kernel; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 0x100000001b3ull;
  for (unsigned d : {config.grid.x, config.grid.y, config.grid.z, config.block.x, config.block.y, config.block.z})
    h = (h ^ d) * 0x100000001b3ull;
  ScheduleRng mix{schedule ^ h};
  return mix.next();
}

void launch_explored(const LaunchConfig& config, const std::function<void()>& body, std::uint64_t schedule) {
  ScheduleRng rng{launch_seed(schedule, config)};
  const std::size_t blocks = config.grid.count();
  std::vector<unsigned> order(blocks);
  for (std::size_t i = 0; i < blocks; ++i) order[i] = static_cast<unsigned>(i);
  for (std::size_t i = blocks; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  const std::size_t resident_max = 1 + rng.below(std::min<std::size_t>(std::max<std::size_t>(blocks, 1), 8));
  constexpr std::uint64_t kSwitchOneIn[] = {1, 2, 8, 64};
  const std::uint64_t switch_one_in = kSwitchOneIn[rng.below(4)];

  std::vector<std::unique_ptr<Worker>> resident;
  std::size_t next = 0;
  std::string error;
  std::exception_ptr exception;
  while (error.empty() && !exception) {
    while (resident.size() < resident_max && next < blocks) {
      resident.push_back(take_worker());
      start_block(config, body, order[next++], *resident.back());
      resident.back()->block.rng = &rng;
      resident.back()->block.switch_one_in = switch_one_in;
    }
    if (resident.empty()) break;
    const std::size_t r = rng.below(resident.size());
    Block& b = resident[r]->block;
    g_block = &b;
    const Step step = step_block(b);
    g_block = nullptr;
    if (step == Step::failed) {
      error = b.error;
      exception = b.exception;
    }
    if (step != Step::running) {
      b.exception = nullptr;
      b.rng = nullptr;
      give_back(std::move(resident[r]));
      resident.erase(resident.begin() + static_cast<std::ptrdiff_t>(r));
    }
  }
  for (std::unique_ptr<Worker>& w : resident) {  // abandoned after an error: never resumed
    w->block.exception = nullptr;
    w->block.rng = nullptr;
    give_back(std::move(w));
  }
  if (!error.empty()) throw EmulationError(error + " (under schedule " + std::to_string(schedule) + ")");
  if (exception) std::rethrow_exception(exception);
}

// Lands a cp.async: its bytes stop being in flight and are written, by its thread, now.
void land(Block& b, unsigned thread, const CopyInFlight& c) {
  const std::size_t offset = static_cast<std::size_t>(c.dst - b.smem.data());
  for (std::size_t i = offset; i < offset + 16; ++i) b.shadow[i].copy_in_flight = 0;
  check_smem(c.dst, 16, true, static_cast<int>(thread));
  if (c.valid)
    std::memcpy(c.dst, c.src, 16);
  else
    std::memset(c.dst, 0, 16);
}

}  // namespace

std::uint64_t schedule() { return g_schedule.load(std::memory_order_relaxed); }
void set_schedule(std::uint64_t seed) { g_schedule.store(seed, std::memory_order_relaxed); }

void schedule_point() {
  Block* b = g_block;
  if (b == nullptr || b->rng == nullptr || b->current == nullptr) return;
  if (b->rng->below(b->switch_one_in) == 0) block_yield();
}

void cp_async_copy(void* smem_dst, const void* global_src, bool valid) {
  schedule_point();
  check_smem(smem_dst, 16, true);
  Block& b = block();
  if (b.rng == nullptr) {  // the default schedule: synchronous
    if (valid)
      std::memcpy(smem_dst, global_src, 16);
    else
      std::memset(smem_dst, 0, 16);
    return;
  }
  Fiber& f = *b.current;
  auto* dst = static_cast<std::byte*>(smem_dst);
  const std::size_t offset = static_cast<std::size_t>(dst - b.smem.data());
  for (std::size_t i = offset; i < offset + 16; ++i) b.shadow[i].copy_in_flight = f.linear + 1;
  f.copies.push_back({dst, global_src, valid, f.groups_committed});
}

void cp_async_commit() {
  Block& b = block();
  if (b.rng != nullptr) ++b.current->groups_committed;
}

void cp_async_wait(int pending) {
  Block& b = block();
  if (b.rng == nullptr) return;
  Fiber& f = *b.current;
  const int landed_below = f.groups_committed - pending;  // groups before this one have landed
  std::size_t kept = 0;
  for (const CopyInFlight& c : f.copies) {
    if (c.group < landed_below)
      land(b, f.linear, c);
    else
      f.copies[kept++] = c;
  }
  f.copies.resize(kept);
}

void launch(const LaunchConfig& config, const std::function<void()>& body) {
  if (config.block.count() == 0 || config.block.count() > 1024)
    throw std::invalid_argument(std::string("emulator: block of ") + std::to_string(config.block.count()) +
                                " threads for kernel " + config.kernel + " (1..1024)");
  if (const std::uint64_t seed = schedule(); seed != 0) return launch_explored(config, body, seed);
  const std::size_t blocks = config.grid.count();
  unsigned workers = config.host_threads ? config.host_threads : std::max(1u, std::thread::hardware_concurrency());
  workers = static_cast<unsigned>(std::min<std::size_t>(workers, std::max<std::size_t>(blocks, 1)));
  std::vector<std::string> errors(blocks);
  std::vector<std::exception_ptr> exceptions(blocks);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    std::unique_ptr<Worker> worker = take_worker();
    for (std::size_t i; !stop && (i = next.fetch_add(1)) < blocks;) {
      emulate_block(config, body, static_cast<unsigned>(i), *worker, errors[i], exceptions[i]);
      if (!errors[i].empty() || exceptions[i]) stop = true;
    }
    give_back(std::move(worker));
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < blocks; ++i) {
    if (!errors[i].empty()) throw EmulationError(errors[i]);
    if (exceptions[i]) std::rethrow_exception(exceptions[i]);
  }
}

Dim3 thread_idx() { return block().current->idx; }
Dim3 block_idx() { return block().idx; }
Dim3 block_dim() { return block().config->block; }
Dim3 grid_dim() { return block().config->grid; }
unsigned lane_id() { return block().current->linear % 32; }
unsigned linear_thread() { return block().current->linear; }
unsigned linear_thread_of_lane(unsigned lane) { return block().current->linear / 32 * 32 + lane; }
std::byte* dynamic_smem() { return block().smem.data(); }
std::size_t dynamic_smem_size() { return block().smem.size(); }

void sync_block(std::source_location site) {
  Block& b = block();
  b.current->wait = Wait::barrier;
  b.current->site = site;
  block_yield();
}

void check_smem(const void* p, std::size_t bytes, bool write, int thread) {
  Block& b = block();
  const unsigned t = thread < 0 ? b.current->linear : static_cast<unsigned>(thread);
  const auto* base = b.smem.data();
  const auto* at = static_cast<const std::byte*>(p);
  const char* verb = write ? "write" : "read";
  if (at < base || at + bytes > base + b.smem.size()) {
    std::ostringstream os;
    os << "shared-memory out-of-bounds " << verb << " of " << bytes << " bytes at offset " << (at - base)
       << " (dynamic shared memory is " << b.smem.size() << " bytes)";
    if (t != b.current->linear) os << " on behalf of " << thread_text(b, t);
    fail(os.str());
  }
  const std::size_t offset = static_cast<std::size_t>(at - base);
  const std::uint32_t warp = t / 32, warp_epoch = b.warp_epochs[warp];
  // An earlier access by another lane of this warp is ordered if a warp collective came between.
  const auto ordered = [&](std::uint32_t other_warp, std::uint32_t other_warp_epoch) {
    return other_warp == warp && other_warp_epoch < warp_epoch;
  };
  for (std::size_t i = offset; i < offset + bytes; ++i) {
    Shadow& s = b.shadow[i];
    std::string conflict;
    if (s.copy_in_flight != 0) {
      std::ostringstream os;
      os << "shared-memory race: " << thread_text(b, t) << " " << verb << "s offset " << i << " while the cp.async of "
         << thread_text(b, s.copy_in_flight - 1) << " to it is in flight (missing cp.async.wait_group?)";
      fail(os.str());
    }
    if (s.write_epoch == b.epoch && s.writer != t && !ordered(s.writer / 32, s.writer_warp_epoch)) {
      conflict = "written by " + thread_text(b, s.writer);
    } else if (write && s.read_epoch == b.epoch && s.reader != t && !ordered(s.reader_warp, s.reader_warp_epoch)) {
      conflict = s.reader == kManyReaders ? std::string("read by other threads") : "read by " + thread_text(b, s.reader);
    }
    if (!conflict.empty()) {
      std::ostringstream os;
      os << "shared-memory race: " << thread_text(b, t) << " " << verb << "s offset " << i << ", " << conflict
         << " since the last __syncthreads (missing barrier?)";
      fail(os.str());
    }
    if (write) {
      s.write_epoch = b.epoch;
      s.writer = t;
      s.writer_warp_epoch = warp_epoch;
    } else if (s.read_epoch != b.epoch) {
      s.read_epoch = b.epoch;
      s.reader = t;
      s.reader_warp = warp;
      s.reader_warp_epoch = warp_epoch;
    } else if (s.reader != t) {
      s.reader = kManyReaders;
      if (s.reader_warp != warp) s.reader_warp = kManyWarps;
      s.reader_warp_epoch = std::max(s.reader_warp_epoch, warp_epoch);
    }
  }
}

void warp_collective_raw(const char* kind, std::source_location site, std::uint32_t mask, const void* in,
                         std::size_t in_bytes, void* out, std::size_t out_bytes, SlotCompute compute) {
  Block& b = block();
  Fiber& self = *b.current;
  const unsigned warp = self.linear / 32, lane = self.linear % 32;
  Rendezvous& r = b.warps[warp];
  const std::size_t threads = b.fibers.size();
  const std::size_t lanes_present = std::min<std::size_t>(32, threads - warp * 32);
  const std::uint32_t present = lanes_present == 32 ? 0xffffffffu : ((1u << lanes_present) - 1);
  // The messages are built only on the error paths: a stream costs more than the rendezvous.
  if (!((mask >> lane) & 1u)) {
    std::ostringstream os;
    os << kind << " at " << text(site) << " with mask 0x" << std::hex << mask << " that excludes the calling lane";
    fail(os.str());
  }
  if (mask & ~present) {
    std::ostringstream os;
    os << kind << " at " << text(site) << " with mask 0x" << std::hex << mask << " naming lanes the warp does not have";
    fail(os.str());
  }
  if (!r.open) {
    r = Rendezvous{};
    r.open = true;
    r.kind = kind;
    r.site = site;
    r.mask = mask;
  } else if (!same_text(r.kind, kind) || r.site.line() != site.line() ||
             !same_text(r.site.file_name(), site.file_name()) || r.mask != mask) {
    std::ostringstream os;
    os << "warp collective reached by a non-converged subset: the lane calls " << kind << " at " << text(site)
       << " while lanes of its warp wait at " << r.kind << " at " << text(r.site);
    fail(os.str());
  }
  std::memcpy(r.in + lane * kSlotBytes, in, in_bytes);
  r.arrived |= 1u << lane;
  if (r.arrived != r.mask) {
    self.wait = Wait::collective;
    self.site = site;
    self.kind = kind;
    block_yield();
  } else {
    compute(r.in, r.out, r.mask);
    ++b.warp_epochs[warp];
    // Each lane's output goes to its own fiber: the next collective may reopen r before the other
    // lanes resume.
    for (unsigned l = 0; l < 32; ++l) {
      if (!((r.mask >> l) & 1u)) continue;
      Fiber& f = b.fibers[warp * 32 + l];
      std::memcpy(f.result, r.out + l * kSlotBytes, kSlotBytes);
      f.wait = Wait::none;
    }
    r.open = false;
  }
  std::memcpy(out, self.result, out_bytes);
}

}  // namespace flashproof::emu
