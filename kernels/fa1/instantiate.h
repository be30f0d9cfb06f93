// The instantiations of the FA1 kernels, one forward and one backward per tile set and FA1 head-dim
// bucket (kFa1HeadDimBuckets) with the tile shape of kernels/algo/tile_configs.h; the dtype is a
// run-time argument of the mma. Included once per target (fa1_emulated.cpp, fa1_gpu.cu).
// FLASHPROOF_FA1_BUCKETS (a bit per bucket, from CMake's FLASHPROOF_FA1_HEAD_DIMS) narrows the set.
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/backward_kernel.h"
#include "kernels/fa1/forward_kernel.h"
#include "kernels/fa1/targets.h"

#ifndef FLASHPROOF_FA1_BUCKETS
#define FLASHPROOF_FA1_BUCKETS 0x7
#endif

namespace flashproof::kernels::FP_TARGET {

constexpr bool fa1_bucket_compiled(int bucket) {
  for (int i = 0; i < 3; ++i)
    if (algo::kFa1HeadDimBuckets[i] == bucket) return ((FLASHPROOF_FA1_BUCKETS >> i) & 1) != 0;
  return false;
}

template <int kBucket, algo::TileSet kSet>
using Fa1ForwardFor = Fa1ForwardTraits<kBucket, algo::tile_config("fa1", "forward", kBucket, kSet).block_m,
                                       algo::tile_config("fa1", "forward", kBucket, kSet).block_n,
                                       algo::tile_config("fa1", "forward", kBucket, kSet).warps>;
template <int kBucket, algo::TileSet kSet>
using Fa1BackwardFor = FlashBackwardTraits<kBucket, algo::tile_config("fa1", "backward", kBucket, kSet).block_m,
                                           algo::tile_config("fa1", "backward", kBucket, kSet).block_n,
                                           algo::tile_config("fa1", "backward", kBucket, kSet).warps>;

template <bool kBackward, int kBucket, algo::TileSet kSet, class Params>
void fa1_launch(const Params& p) {
  if constexpr (kBackward)
    launch_fa1_backward<Fa1BackwardFor<kBucket, kSet>>(p);
  else
    launch_fa1_forward<Fa1ForwardFor<kBucket, kSet>>(p);
}

template <bool kBackward, int kBucket, class Params>
bool fa1_try_bucket(const Params& p, int bucket, algo::TileSet tiles) {
  if constexpr (fa1_bucket_compiled(kBucket)) {
    if (bucket != kBucket) return false;
    if (tiles == algo::TileSet::alternate)
      fa1_launch<kBackward, kBucket, algo::TileSet::alternate>(p);
    else
      fa1_launch<kBackward, kBucket, algo::TileSet::shipped>(p);
    return true;
  } else {
    return false;
  }
}

template <bool kBackward, class Params>
void fa1_dispatch(const Params& p, int bucket, algo::TileSet tiles) {
  const bool ran = fa1_try_bucket<kBackward, 64>(p, bucket, tiles) ||
                   fa1_try_bucket<kBackward, 128>(p, bucket, tiles) ||
                   fa1_try_bucket<kBackward, 256>(p, bucket, tiles);
  if (!ran) throw std::invalid_argument("fa1: head-dim bucket " + std::to_string(bucket) + " is not built here");
}

void fa1_run_forward(const Fa1ForwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  fa1_dispatch<false>(p, head_dim_bucket, tiles);
}
void fa1_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  fa1_dispatch<true>(p, head_dim_bucket, tiles);
}

}  // namespace flashproof::kernels::FP_TARGET
