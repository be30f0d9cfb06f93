// The instantiations behind a kernel family's entry points (kernels/flash/targets.h): one forward
// and one backward kernel per head-dim bucket the build compiles (built_buckets.h), tile set (with
// the shapes of kernels/algo/tile_configs.h) and input type (fp16, bf16: one tensor-core instruction
// kind per kernel). A family binds its kernels in a FamilyKernels specialisation and instantiates
// the entry points once per target (faN/entry_points.h, included by faN_emulated.cpp and faN_gpu.cu).
#pragma once

#include <stdexcept>
#include <string>

#include "kernels/algo/tile_configs.h"
#include "kernels/flash/backward_key_block.h"
#include "kernels/flash/bucket_dispatch.h"
#include "kernels/flash/built_buckets.h"
#include "kernels/flash/targets.h"
#include "kernels/launch.h"

namespace flashproof::kernels::FP_TARGET {

// A family's kernels: ForwardTraits<head_dim, block_m, block_n, warps, tag>, and static
// forward<Traits>(params) and backward<Traits>(params) that launch them.
template <algo::KernelFamily kFamily>
struct FamilyKernels;

// Whether p asks for the soft cap or ALiBi (FA1's forward parameters cannot).
template <class Params>
bool score_mod_active(const Params& p) {
  if constexpr (requires { p.mod; })
    return p.mod.active();
  else
    return false;
}

// flash::dispatch_bucket's launcher for one family and direction (bucket_dispatch.h).
template <algo::KernelFamily kFamily, algo::Direction kDirection>
struct FamilyLauncher {
  static constexpr bool compiled(int bucket) { return flash::bucket_built(kFamily, bucket); }
  template <int kBucket, algo::TileSet kSet, arch::MmaTag kTag, class Params>
  static void run(const Params& p) {
    using Kernels = FamilyKernels<kFamily>;
    constexpr algo::TileConfig c = algo::tile_config(kFamily, kDirection, kBucket, kSet);
    // The soft cap and ALiBi: their own instantiation (kScoreMod), where there is one (shipped
    // tiles, the buckets of flash::score_mod_built). The API refuses the rest; should one get here,
    // it is refused again rather than run by the dense kernel.
    if (score_mod_active(p)) {
      if constexpr (kSet == algo::TileSet::shipped && flash::score_mod_built(kFamily, kBucket)) {
        if constexpr (kDirection == algo::Direction::backward)
          Kernels::template backward<FlashBackwardTraits<kBucket, c.block_m, c.block_n, c.warps, kTag, true>>(p);
        else
          Kernels::template forward<
              typename Kernels::template ForwardTraits<kBucket, c.block_m, c.block_n, c.warps, kTag, true>>(p);
        return;
      } else {
        throw std::invalid_argument(std::string(algo::family_name(kFamily)) +
                                    ": the soft cap and ALiBi have no kernel for head-dim bucket " +
                                    std::to_string(kBucket) + " and these tiles");
      }
    }
    if constexpr (kDirection == algo::Direction::backward)
      Kernels::template backward<FlashBackwardTraits<kBucket, c.block_m, c.block_n, c.warps, kTag>>(p);
    else
      Kernels::template forward<typename Kernels::template ForwardTraits<kBucket, c.block_m, c.block_n, c.warps, kTag>>(p);
  }
};

template <algo::KernelFamily kFamily, class ForwardParams>
void run_forward(const ForwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  flash::dispatch_bucket<kFamily, FamilyLauncher<kFamily, algo::Direction::forward>>(p, head_dim_bucket, tiles);
}

template <algo::KernelFamily kFamily>
void run_backward(const FlashBackwardParams& p, int head_dim_bucket, algo::TileSet tiles) {
  flash::dispatch_bucket<kFamily, FamilyLauncher<kFamily, algo::Direction::backward>>(p, head_dim_bucket, tiles);
}

}  // namespace flashproof::kernels::FP_TARGET
