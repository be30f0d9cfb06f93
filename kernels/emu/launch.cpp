// launch (emulator.h): checks the block size, then runs the launch under an explored schedule
// (explored_schedule.cpp) or, by default, its blocks in index order on parallel host threads, each
// block to its end on one of them.
#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/emu/block.h"
#include "kernels/emu/block_scheduler.h"
#include "kernels/emu/explored_schedule.h"
#include "kernels/emu/worker_pool.h"

namespace flashproof::emu {

using namespace detail;

namespace {

std::atomic<unsigned> g_host_threads{0};

void emulate_block(const LaunchConfig& config, const std::function<void()>& body, unsigned block_linear,
                   Worker& worker, std::string& error, std::exception_ptr& exception) {
  start_block(config, body, block_linear, worker.block, worker.stacks);
  Block& b = worker.block;
  g_block = &b;
  run_block(b);
  g_block = nullptr;
  error = b.error;
  exception = b.exception;
  b.exception = nullptr;  // the pool must not keep a kernel's exception alive
}

}  // namespace

unsigned host_threads() { return g_host_threads.load(std::memory_order_relaxed); }
void set_host_threads(unsigned threads) { g_host_threads.store(threads, std::memory_order_relaxed); }

void launch(const LaunchConfig& config, const std::function<void()>& body) {
  if (config.block.count() == 0 || config.block.count() > 1024)
    throw std::invalid_argument(std::string("emulator: block of ") + std::to_string(config.block.count()) +
                                " threads for kernel " + config.kernel + " (1..1024)");
  if (const std::uint64_t seed = schedule(); seed != 0) return launch_explored(config, body, seed);
  const std::size_t blocks = config.grid.count();
  unsigned workers = host_threads() ? host_threads() : config.host_threads;
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
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

}  // namespace flashproof::emu
