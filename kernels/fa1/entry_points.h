// FA1's per-target entry points (kernels/flash/targets.h): its kernels bound to the shared
// instantiation (kernels/flash/instantiate.h). Included once per target, by fa1_emulated.cpp (g++)
// and fa1_gpu.cu (nvcc).
#pragma once

#include "kernels/fa1/backward_kernel.h"
#include "kernels/fa1/forward_kernel.h"
#include "kernels/flash/instantiate.h"

namespace flashproof::kernels::FP_TARGET {

template <>
struct FamilyKernels<algo::KernelFamily::fa1> {
  template <int kHeadDim, int kBlockM, int kBlockN, int kWarps, arch::MmaTag kTag>
  using ForwardTraits = Fa1ForwardTraits<kHeadDim, kBlockM, kBlockN, kWarps, kTag>;
  template <class Traits>
  static void forward(const Fa1ForwardParams& p) { launch_fa1_forward<Traits>(p); }
  template <class Traits>
  static void backward(const FlashBackwardParams& p) { launch_fa1_backward<Traits>(p); }
};

template void run_forward<algo::KernelFamily::fa1>(const Fa1ForwardParams&, int, algo::TileSet);
template void run_backward<algo::KernelFamily::fa1>(const FlashBackwardParams&, int, algo::TileSet);

}  // namespace flashproof::kernels::FP_TARGET
