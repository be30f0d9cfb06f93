// Which thread of a block runs next. The default schedule runs a block to its end in thread order,
// each thread until it waits; an explored schedule runs it turn by turn, a random runnable thread
// per turn. With no thread runnable, both release the barrier all wait at or record why the block
// is stuck (a deadlock, a divergence). Internal to the emulator.
#pragma once

#include "kernels/emu/block.h"

namespace flashproof::emu::detail {

// Runs the block (g_block) until it finishes or fails (b.error or b.exception set).
void run_block(Block& b);

enum class Step { running, finished, failed };

// One turn of the block (g_block) under an explored schedule (b.rng set): a random runnable thread
// runs until it next waits, exits or is switched out at a scheduling point.
Step step_block(Block& b);

}  // namespace flashproof::emu::detail
