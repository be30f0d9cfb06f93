// The host-side choice of a kernel instantiation: one per head-dim bucket, tile set
// (kernels/algo/tile_configs.h) and input type (p.shape.tag), of which a build may compile only some
// buckets. The buckets are the family's list in tile_configs.h; the Launcher
// (kernels/flash/instantiate.h) says which are compiled and runs one:
//   static constexpr bool compiled(int bucket);                   // built in this build
//   template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag, class P> static void run(const P&);
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

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

template <algo::KernelFamily kFamily, class Launcher, class Params, std::size_t... kIndex>
bool try_buckets(const Params& p, int bucket, algo::TileSet tiles, std::index_sequence<kIndex...>) {
  return (try_bucket<Launcher, algo::head_dim_buckets(kFamily)[kIndex]>(p, bucket, tiles) || ...);
}

// Runs the instantiation of `bucket` (one of the family's buckets) with the tile set asked; throws
// std::invalid_argument when that bucket is not compiled in this build.
template <algo::KernelFamily kFamily, class Launcher, class Params>
void dispatch_bucket(const Params& p, int bucket, algo::TileSet tiles) {
  constexpr std::size_t kBuckets = algo::head_dim_buckets(kFamily).size();
  if (!try_buckets<kFamily, Launcher>(p, bucket, tiles, std::make_index_sequence<kBuckets>{}))
    throw std::invalid_argument(std::string(algo::family_name(kFamily)) + ": head-dim bucket " +
                                std::to_string(bucket) + " is not built here");
}

}  // namespace flashproof::kernels::flash
