// The host-side choice of a kernel instantiation: one per head-dim bucket, tile set
// (kernels/algo/tile_configs.h) and input type (p.shape.tag), of which a build may compile only some
// buckets. FA1 and FA2 each name their buckets and a Launcher:
//   static constexpr bool compiled(int bucket);                   // built in this build
//   template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag, class P> static void run(const P&);
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/algo/tile_configs.h"
#include "kernels/arch/mma.h"

namespace flashproof::kernels::flash {

template <class Launcher, int kBucket, algo::TileSet kSet, class Params>
void run_for_dtype(const Params& p) {
  if (p.shape.tag == arch::MmaTag::bf16)
    Launcher::template run<kBucket, kSet, arch::MmaTag::bf16>(p);
  else
    Launcher::template run<kBucket, kSet, arch::MmaTag::fp16>(p);
}

template <class Launcher, int kBucket, class Params>
bool try_bucket(const Params& p, int bucket, algo::TileSet tiles) {
  if constexpr (Launcher::compiled(kBucket)) {
    if (bucket != kBucket) return false;
    if (tiles == algo::TileSet::alternate)
      run_for_dtype<Launcher, kBucket, algo::TileSet::alternate>(p);
    else
      run_for_dtype<Launcher, kBucket, algo::TileSet::shipped>(p);
    return true;
  } else {
    return false;
  }
}

// Runs the instantiation of `bucket` (one of kBuckets) with the tile set asked; throws
// std::invalid_argument when that bucket is not compiled in this build.
template <class Launcher, int... kBuckets, class Params>
void dispatch_bucket(const char* kernel, const Params& p, int bucket, algo::TileSet tiles) {
  if (!(try_bucket<Launcher, kBuckets>(p, bucket, tiles) || ...))
    throw std::invalid_argument(std::string(kernel) + ": head-dim bucket " + std::to_string(bucket) +
                                " is not built here");
}

}  // namespace flashproof::kernels::flash
