// __syncthreads (sync_block, emulator.h): a thread waits at the barrier until every live thread of
// its block waits at the same one. Internal to the emulator.
#pragma once

#include "kernels/emu/block.h"

namespace flashproof::emu::detail {

// Called when no thread can run and none waits at a warp collective: releases the barrier if every
// live thread waits at the same one (a new barrier epoch begins); otherwise records the divergence
// in b.error, or returns false with none recorded when no thread waits at a barrier.
bool release_barrier(Block& b);

}  // namespace flashproof::emu::detail
