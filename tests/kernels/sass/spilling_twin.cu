// The sass check's twin (tests/kernels/sass/CMakeLists.txt): one shipped kernel, FA1's backward
// at d 64 in fp16 with its shipped tile shape, built alone so that the deliberately spilling build
// (ptxas -O0) takes seconds rather than the minute of all of fa1_gpu.cu.
#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/backward_kernel.h"

namespace flashproof::kernels::gpu {

constexpr algo::TileConfig kShape = algo::tile_config(algo::KernelFamily::fa1, algo::Direction::backward, 64);
template __global__ void fa1_backward_kernel<
    FlashBackwardTraits<64, kShape.block_m, kShape.block_n, kShape.warps, arch::MmaTag::fp16>>(FlashBackwardParams);

}  // namespace flashproof::kernels::gpu
