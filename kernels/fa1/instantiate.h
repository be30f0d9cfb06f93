// The instantiations of the FA1 kernels, one forward and one backward per tile set, FA1 head-dim
// bucket (kFa1HeadDimBuckets, with the tile shape of kernels/algo/tile_configs.h) and input type
// (fp16, bf16: one tensor-core instruction kind per kernel). Included once per target
// (fa1_emulated.cpp, fa1_gpu.cu).
// FLASHPROOF_FA1_BUCKETS (a bit per bucket, from CMake's FLASHPROOF_FA1_HEAD_DIMS) narrows the set.
#pragma once

#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/backward_kernel.h"
#include "kernels/fa1/forward_kernel.h"
#include "kernels/fa1/targets.h"
#include "kernels/flash/bucket_dispatch.h"

#ifndef FLASHPROOF_FA1_BUCKETS
#define FLASHPROOF_FA1_BUCKETS 0x7
#endif

namespace flashproof::kernels::FP_TARGET {

template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag>
using Fa1ForwardFor = Fa1ForwardTraits<kBucket, algo::tile_config("fa1", "forward", kBucket, kSet).block_m,
                                       algo::tile_config("fa1", "forward", kBucket, kSet).block_n,
                                       algo::tile_config("fa1", "forward", kBucket, kSet).warps, kTag>;
template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag>
using Fa1BackwardFor = FlashBackwardTraits<kBucket, algo::tile_config("fa1", "backward", kBucket, kSet).block_m,
                                           algo::tile_config("fa1", "backward", kBucket, kSet).block_n,
                                           algo::tile_config("fa1", "backward", kBucket, kSet).warps, kTag>;

// flash::dispatch_bucket's launcher for the FA1 kernels (bucket_dispatch.h).
template <bool kBackward>
struct Fa1Launcher {
  static constexpr bool compiled(int bucket) {
    for (int i = 0; i < 3; ++i)
      if (algo::kFa1HeadDimBuckets[i] == bucket) return ((FLASHPROOF_FA1_BUCKETS >> i) & 1) != 0;
    return false;
  }
  template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag, class Params>
  static void run(const Params& p) {
    if constexpr (kBackward)
      launch_fa1_backward<Fa1BackwardFor<kBucket, kSet, kTag>>(p);
    else
      launch_fa1_forward<Fa1ForwardFor<kBucket, kSet, kTag>>(p);
  }
};

void fa1_run_forward(const Fa1ForwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  flash::dispatch_bucket<Fa1Launcher<false>, 64, 128, 256>("fa1", p, head_dim_bucket, tiles);
}
void fa1_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  flash::dispatch_bucket<Fa1Launcher<true>, 64, 128, 256>("fa1", p, head_dim_bucket, tiles);
}

}  // namespace flashproof::kernels::FP_TARGET
