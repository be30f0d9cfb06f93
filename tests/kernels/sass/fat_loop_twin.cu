// The instructions-per-HMMA check's twin (tests/kernels/sass/CMakeLists.txt): FA2's forward at d 128
// in fp16 with its shipped tile shape, built without the split loops: a rolled head-dim loop (by
// swizzle periods) and the key blocks through the tested body and the mask-free one, the d 224 and
// 256 path. The check must see its main loop above the budget's ceiling for the shipped kernel.
#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/forward_kernel.h"

namespace flashproof::kernels::gpu {

template <int kHeadDim, int kBlockM, int kBlockN, int kWarps, arch::MmaTag kTag>
struct FatLoopTwinTraits : Fa2ForwardTraits<kHeadDim, kBlockM, kBlockN, kWarps, kTag> {
  static constexpr bool kUnrollHeadDim = false;
  static constexpr bool kSplitLoops = false;
};

constexpr algo::TileConfig kShape = algo::tile_config(algo::KernelFamily::fa2, algo::Direction::forward, 128);
template __global__ void fa2_forward_kernel<
    FatLoopTwinTraits<128, kShape.block_m, kShape.block_n, kShape.warps, arch::MmaTag::fp16>>(Fa2ForwardParams);

}  // namespace flashproof::kernels::gpu
