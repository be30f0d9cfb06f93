#include "kernels/emu/block.h"

#include <cstring>

#include "kernels/emu/diagnostics.h"

namespace flashproof::emu::detail {

constinit thread_local Block* g_block = nullptr;

void fail(const std::string& what) {
  Block& b = block();
  if (b.error.empty()) b.error = where(b, b.current->linear) + ": " + what;
  throw FiberAbort{};
}

namespace {

// What every fiber runs; when it returns, the fiber has finished.
void fiber_entry() {
  Block& b = *g_block;
  try {
    (*b.body)();
  } catch (const FiberAbort&) {
    // b.error holds the violation
  } catch (...) {
    if (!b.exception) b.exception = std::current_exception();
  }
  b.current->wait = Wait::done;
}

}  // namespace

void start_block(const LaunchConfig& config, const std::function<void()>& body, unsigned block_linear, Block& b,
                 std::vector<char>& stacks) {
  // Every field is reset here: nothing leaks from the previous block.
  b.config = &config;
  b.body = &body;
  b.idx = unflatten(block_linear, config.grid);
  const std::size_t threads = config.block.count();
  b.fibers.clear();  // forgets the fibers of the previous block (FiberContext)
  b.fibers.resize(threads);
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
  b.current = nullptr;
  b.error.clear();
  b.exception = nullptr;
  b.rng = nullptr;
  b.switch_one_in = 0;
  const std::size_t stack = config.stack_bytes;
  if (stacks.size() < threads * stack) {
    // Growing copies the old stacks, redzones of unfinished frames included: clear them first.
    forget_old_frames(stacks.data(), stacks.size());
    stacks.resize(threads * stack);
  }
  for (unsigned t = 0; t < threads; ++t) {
    b.fibers[t].linear = t;
    b.fibers[t].idx = unflatten(t, config.block);
    b.fibers[t].context.start_on(stacks.data() + t * stack, stack, fiber_entry);
  }
}

}  // namespace flashproof::emu::detail
