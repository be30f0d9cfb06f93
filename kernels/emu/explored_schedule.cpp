#include "kernels/emu/explored_schedule.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "kernels/emu/block.h"
#include "kernels/emu/block_scheduler.h"
#include "kernels/emu/worker_pool.h"

namespace flashproof::emu {
namespace {

std::atomic<std::uint64_t> g_schedule{0};

}  // namespace

std::uint64_t schedule() { return g_schedule.load(std::memory_order_relaxed); }
void set_schedule(std::uint64_t seed) { g_schedule.store(seed, std::memory_order_relaxed); }

void schedule_point() {
  detail::Block* b = detail::g_block;
  if (b == nullptr || b->rng == nullptr || b->current == nullptr) return;
  if (b->rng->below(b->switch_one_in) == 0) detail::block_yield();
}

namespace detail {
namespace {

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

}  // namespace

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
      Worker& w = *resident.back();
      start_block(config, body, order[next++], w.block, w.stacks);
      w.block.rng = &rng;
      w.block.switch_one_in = switch_one_in;
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

}  // namespace detail
}  // namespace flashproof::emu
