#include "kernels/emu/block_scheduler.h"

#include <algorithm>
#include <sstream>

#include "kernels/emu/barrier.h"
#include "kernels/emu/diagnostics.h"

namespace flashproof::emu::detail {
namespace {

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

bool all_done(const Block& b) {
  return std::all_of(b.fibers.begin(), b.fibers.end(), [](const Fiber& f) { return f.wait == Wait::done; });
}

// With no thread runnable and some still live: releases the barrier they all wait at (true), or
// records why the block is stuck unless a divergence was recorded already (false).
bool unblock(Block& b) {
  const bool any_collective =
      std::any_of(b.fibers.begin(), b.fibers.end(), [](const Fiber& f) { return f.wait == Wait::collective; });
  if (!any_collective && release_barrier(b)) return true;
  if (b.error.empty()) {
    unsigned culprit = 0;
    const std::string reason = stuck_reason(b, culprit);
    b.error = where(b, culprit) + ": " + reason;
  }
  return false;
}

}  // namespace

void run_block(Block& b) {
  for (;;) {
    bool ran = false;
    for (Fiber& f : b.fibers) {
      if (f.wait != Wait::none) continue;
      b.current = &f;
      f.context.resume();
      ran = true;
      if (!b.error.empty() || b.exception) return;
    }
    if (all_done(b)) return;
    if (ran) continue;
    if (!unblock(b)) return;
  }
}

Step step_block(Block& b) {
  if (!b.error.empty() || b.exception) return Step::failed;
  // The first runnable thread from a random one on (not uniform, but every runnable thread can be
  // picked, and a turn costs little more than a switch while most threads are runnable).
  const std::size_t n = b.fibers.size(), start = b.rng->below(n);
  for (std::size_t k = 0; k < n; ++k) {
    Fiber& f = b.fibers[(start + k) % n];
    if (f.wait != Wait::none) continue;
    b.current = &f;
    f.context.resume();
    return !b.error.empty() || b.exception ? Step::failed : Step::running;
  }
  if (all_done(b)) return Step::finished;
  return unblock(b) ? Step::running : Step::failed;
}

}  // namespace flashproof::emu::detail
