// Prints, one JSON object per line, every FA1/FA2 kernel instantiation the builds compile: the
// kernel's function name, tile shape, input type, threads, dynamic shared memory and tensor-core
// instructions per step of its inner loop (executed, and present in the loop's code), all read from
// the kernels' own traits. scripts/sass-report
// joins these with what ptxas and the SASS say about each compiled kernel.
#include <cstdio>
#include <utility>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/forward_kernel.h"
#include "kernels/fa2/forward_kernel.h"
#include "kernels/flash/backward_key_block.h"

namespace {

using flashproof::algo::kTileConfigs;
using flashproof::algo::TileConfig;
using flashproof::algo::TileSet;
using flashproof::arch::MmaTag;
namespace k = flashproof::kernels::emulated;

template <const TileConfig& c, MmaTag kTag>
void print_row() {
  constexpr bool fa2 = flashproof::algo::same_name(c.kernel, "fa2");
  constexpr bool forward = flashproof::algo::same_name(c.direction, "forward");
  using Traits = std::conditional_t<
      forward,
      std::conditional_t<fa2, k::Fa2ForwardTraits<c.head_dim_bucket, c.block_m, c.block_n, c.warps, kTag>,
                         k::Fa1ForwardTraits<c.head_dim_bucket, c.block_m, c.block_n, c.warps, kTag>>,
      k::FlashBackwardTraits<c.head_dim_bucket, c.block_m, c.block_n, c.warps, kTag>>;
  std::printf(
      "{\"kernel\": \"%s_%s_kernel\", \"implementation\": \"%s\", \"direction\": \"%s\", \"head_dim\": %d, "
      "\"block_m\": %d, \"block_n\": %d, \"warps\": %d, \"dtype\": \"%s\", \"tiles\": \"%s\", \"threads\": %d, "
      "\"dynamic_smem_bytes\": %zu, \"mmas_per_step\": %d, \"mmas_in_loop_code\": %d}\n",
      c.kernel, forward ? "forward" : "backward", c.kernel, c.direction, c.head_dim_bucket, c.block_m, c.block_n,
      c.warps, kTag == MmaTag::bf16 ? "bf16" : "fp16", c.set == TileSet::shipped ? "shipped" : "alternate",
      Traits::kThreads, static_cast<std::size_t>(Traits::kSmemBytes), Traits::kMmasPerStep, Traits::kMmasInLoopCode);
}

template <std::size_t... I>
void print_all(std::index_sequence<I...>) {
  (print_row<kTileConfigs[I], MmaTag::fp16>(), ...);
  (print_row<kTileConfigs[I], MmaTag::bf16>(), ...);
}

}  // namespace

int main() {
  print_all(std::make_index_sequence<flashproof::algo::kTileConfigCount>{});
  return 0;
}
