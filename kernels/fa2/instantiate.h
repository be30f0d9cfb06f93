// The instantiations of the FA2 kernels, one forward and one backward per tile set and head-dim bucket
// with the tile shape of kernels/algo/tile_configs.h; the dtype is a run-time argument of the mma.
// Included once per target (fa2_emulated.cpp, fa2_gpu.cu). FLASHPROOF_FA2_BUCKETS (a bit per entry
// of kHeadDimBuckets, set by CMake's FLASHPROOF_FA2_HEAD_DIMS) narrows the set for quick builds.
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/backward_kernel.h"
#include "kernels/fa2/forward_kernel.h"
#include "kernels/fa2/targets.h"

#ifndef FLASHPROOF_FA2_BUCKETS
#define FLASHPROOF_FA2_BUCKETS 0xFF
#endif

namespace flashproof::kernels::FP_TARGET {

constexpr bool fa2_bucket_compiled(int bucket) {
  for (int i = 0; i < 8; ++i)
    if (algo::kHeadDimBuckets[i] == bucket) return ((FLASHPROOF_FA2_BUCKETS >> i) & 1) != 0;
  return false;
}

template <int kBucket, algo::TileSet kSet>
using Fa2ForwardFor = Fa2ForwardTraits<kBucket, algo::tile_config("fa2", "forward", kBucket, kSet).block_m,
                                       algo::tile_config("fa2", "forward", kBucket, kSet).block_n,
                                       algo::tile_config("fa2", "forward", kBucket, kSet).warps>;
template <int kBucket, algo::TileSet kSet>
using Fa2BackwardFor = FlashBackwardTraits<kBucket, algo::tile_config("fa2", "backward", kBucket, kSet).block_m,
                                           algo::tile_config("fa2", "backward", kBucket, kSet).block_n,
                                           algo::tile_config("fa2", "backward", kBucket, kSet).warps>;

template <bool kBackward, int kBucket, algo::TileSet kSet, class Params>
void fa2_launch(const Params& p) {
  if constexpr (kBackward)
    launch_fa2_backward<Fa2BackwardFor<kBucket, kSet>>(p);
  else
    launch_fa2_forward<Fa2ForwardFor<kBucket, kSet>>(p);
}

template <bool kBackward, int kBucket, class Params>
bool fa2_try_bucket(const Params& p, int bucket, algo::TileSet tiles) {
  if constexpr (fa2_bucket_compiled(kBucket)) {
    if (bucket != kBucket) return false;
    if (tiles == algo::TileSet::alternate)
      fa2_launch<kBackward, kBucket, algo::TileSet::alternate>(p);
    else
      fa2_launch<kBackward, kBucket, algo::TileSet::shipped>(p);
    return true;
  } else {
    return false;
  }
}

template <bool kBackward, class Params>
void fa2_dispatch(const Params& p, int bucket, algo::TileSet tiles) {
  const bool ran = fa2_try_bucket<kBackward, 32>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 64>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 96>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 128>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 160>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 192>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 224>(p, bucket, tiles) ||
                   fa2_try_bucket<kBackward, 256>(p, bucket, tiles);
  if (!ran) throw std::invalid_argument("fa2: head-dim bucket " + std::to_string(bucket) + " is not built here");
}

void fa2_run_forward(const Fa2ForwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  fa2_dispatch<false>(p, head_dim_bucket, tiles);
}
void fa2_run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  fa2_dispatch<true>(p, head_dim_bucket, tiles);
}

}  // namespace flashproof::kernels::FP_TARGET
