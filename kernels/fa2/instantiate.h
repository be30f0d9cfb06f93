// The instantiations of the FA2 kernels, one forward and one backward per tile set, head-dim bucket
// (with the tile shape of kernels/algo/tile_configs.h) and input type (fp16, bf16: one tensor-core
// instruction kind per kernel). Included once per target (fa2_emulated.cpp, fa2_gpu.cu).
// FLASHPROOF_FA2_BUCKETS (a bit per entry of kHeadDimBuckets, set by CMake's FLASHPROOF_FA2_HEAD_DIMS)
// narrows the set for quick builds.
#pragma once

#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/backward_kernel.h"
#include "kernels/fa2/forward_kernel.h"
#include "kernels/fa2/targets.h"
#include "kernels/flash/bucket_dispatch.h"

#ifndef FLASHPROOF_FA2_BUCKETS
#define FLASHPROOF_FA2_BUCKETS 0xFF
#endif

namespace flashproof::kernels::FP_TARGET {

template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag>
using Fa2ForwardFor = Fa2ForwardTraits<kBucket, algo::tile_config("fa2", "forward", kBucket, kSet).block_m,
                                       algo::tile_config("fa2", "forward", kBucket, kSet).block_n,
                                       algo::tile_config("fa2", "forward", kBucket, kSet).warps, kTag>;
template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag>
using Fa2BackwardFor = FlashBackwardTraits<kBucket, algo::tile_config("fa2", "backward", kBucket, kSet).block_m,
                                           algo::tile_config("fa2", "backward", kBucket, kSet).block_n,
                                           algo::tile_config("fa2", "backward", kBucket, kSet).warps, kTag>;

// flash::dispatch_bucket's launcher for the FA2 kernels (bucket_dispatch.h).
template <bool kBackward>
struct Fa2Launcher {
  static constexpr bool compiled(int bucket) {
    for (int i = 0; i < 8; ++i)
      if (algo::kHeadDimBuckets[i] == bucket) return ((FLASHPROOF_FA2_BUCKETS >> i) & 1) != 0;
    return false;
  }
  template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag, class Params>
  static void run(const Params& p) {
    if constexpr (kBackward)
      launch_fa2_backward<Fa2BackwardFor<kBucket, kSet, kTag>>(p);
    else
      launch_fa2_forward<Fa2ForwardFor<kBucket, kSet, kTag>>(p);
  }
};

void fa2_run_forward(const Fa2ForwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  flash::dispatch_bucket<Fa2Launcher<false>, 32, 64, 96, 128, 160, 192, 224, 256>("fa2", p, head_dim_bucket, tiles);
}
void fa2_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  flash::dispatch_bucket<Fa2Launcher<true>, 32, 64, 96, 128, 160, 192, 224, 256>("fa2", p, head_dim_bucket, tiles);
}

}  // namespace flashproof::kernels::FP_TARGET
