// FA2's per-target entry points (kernels/flash/targets.h): its kernels bound to the shared
// instantiation (kernels/flash/instantiate.h). Included once per target, by fa2_emulated.cpp (g++)
// and fa2_gpu.cu (nvcc).
#pragma once

#include "kernels/fa2/backward_kernel.h"
#include "kernels/fa2/forward_kernel.h"
#include "kernels/flash/instantiate.h"

namespace flashproof::kernels::FP_TARGET {

template <>
struct FamilyKernels<algo::KernelFamily::fa2> {
  template <int kHeadDim, int kBlockM, int kBlockN, int kWarps, arch::MmaTag kTag, bool kScoreMod = false>
  using ForwardTraits = Fa2ForwardTraits<kHeadDim, kBlockM, kBlockN, kWarps, kTag, kScoreMod>;
  template <class Traits>
  static void forward(const Fa2ForwardParams& p) { launch_fa2_forward<Traits>(p); }
  template <class Traits>
  static void backward(const FlashBackwardParams& p) { launch_fa2_backward<Traits>(p); }
};

template void run_forward<algo::KernelFamily::fa2>(const Fa2ForwardParams&, int, algo::TileSet);
template void run_backward<algo::KernelFamily::fa2>(const FlashBackwardParams&, int, algo::TileSet);

}  // namespace flashproof::kernels::FP_TARGET
