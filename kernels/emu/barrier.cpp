#include "kernels/emu/barrier.h"

#include "kernels/emu/diagnostics.h"

namespace flashproof::emu {

void sync_block(emu::SourceSite site) {
  detail::Block& b = detail::block();
  b.current->wait = detail::Wait::barrier;
  b.current->site = site;
  detail::block_yield();
}

namespace detail {

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

}  // namespace detail
}  // namespace flashproof::emu
