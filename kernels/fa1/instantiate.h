// The shipped instantiations of the FA1 kernels, one forward and one backward per FA1 head-dim
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

template <int kBucket>
using Fa1ForwardFor = Fa1ForwardTraits<kBucket, algo::tile_config("fa1", "forward", kBucket).block_m,
                                       algo::tile_config("fa1", "forward", kBucket).block_n,
                                       algo::tile_config("fa1", "forward", kBucket).warps>;
template <int kBucket>
using Fa1BackwardFor = FlashBackwardTraits<kBucket, algo::tile_config("fa1", "backward", kBucket).block_m,
                                           algo::tile_config("fa1", "backward", kBucket).block_n,
                                           algo::tile_config("fa1", "backward", kBucket).warps>;

template <bool kBackward, int kBucket, class Params>
bool fa1_try_bucket(const Params& p, int bucket) {
  if constexpr (fa1_bucket_compiled(kBucket)) {
    if (bucket != kBucket) return false;
    if constexpr (kBackward)
      launch_fa1_backward<Fa1BackwardFor<kBucket>>(p);
    else
      launch_fa1_forward<Fa1ForwardFor<kBucket>>(p);
    return true;
  } else {
    return false;
  }
}

template <bool kBackward, class Params>
void fa1_dispatch(const Params& p, int bucket) {
  const bool ran = fa1_try_bucket<kBackward, 64>(p, bucket) || fa1_try_bucket<kBackward, 128>(p, bucket) ||
                   fa1_try_bucket<kBackward, 256>(p, bucket);
  if (!ran) throw std::invalid_argument("fa1: head-dim bucket " + std::to_string(bucket) + " is not built here");
}

void fa1_run_forward(const Fa1ForwardParams& p, int head_dim_bucket) { fa1_dispatch<false>(p, head_dim_bucket); }
void fa1_run_backward(const FlashBackwardParams& p, int head_dim_bucket) { fa1_dispatch<true>(p, head_dim_bucket); }

}  // namespace flashproof::kernels::FP_TARGET
