// What the running thread sees (emulator.h): the CUDA built-ins and its block's shared memory.
#include "kernels/emu/block.h"

namespace flashproof::emu {

using detail::block;

Dim3 thread_idx() { return block().current->idx; }
Dim3 block_idx() { return block().idx; }
Dim3 block_dim() { return block().config->block; }
Dim3 grid_dim() { return block().config->grid; }
unsigned lane_id() { return block().current->linear % 32; }
unsigned linear_thread() { return block().current->linear; }
unsigned linear_thread_of_lane(unsigned lane) { return block().current->linear / 32 * 32 + lane; }
std::byte* dynamic_smem() { return block().smem.data(); }
std::size_t dynamic_smem_size() { return block().smem.size(); }

}  // namespace flashproof::emu
