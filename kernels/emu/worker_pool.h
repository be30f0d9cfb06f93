// What a host thread needs to emulate blocks: the fiber stacks and the block's arrays. Workers are
// kept in a pool across launches, so that once grown they allocate nothing and touch no fresh page
// (a fresh block's shadow memory alone is 32 bytes per byte of shared memory, and the kernel would
// otherwise map and fault it in for every block). Internal to the emulator.
#pragma once

#include <memory>
#include <vector>

#include "kernels/emu/block.h"

namespace flashproof::emu::detail {

struct Worker {
  std::vector<char> stacks;
  Block block;
};

// A worker from the pool, or a new one; thread-safe.
std::unique_ptr<Worker> take_worker();
// Returns a worker to the pool; its block must hold no kernel exception (the pool would keep it
// alive) and must not be resumed again.
void give_back(std::unique_ptr<Worker> w);

}  // namespace flashproof::emu::detail
