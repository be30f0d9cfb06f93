// FA2's per-target entry points (kernels/flash/targets.h): its kernels bound to the shared
// instantiation (kernels/flash/instantiate.h). Included once per target, by fa2_emulated.cpp (g++)
// and fa2_gpu.cu (nvcc).
#pragma once

#include "kernels/fa2/backward_kernel.h"
#include "kernels/fa2/decode_kernel.h"
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

// The decode path's instantiations: the buckets of flash::kFa2DecodeBuckets this build compiles,
// fp16 and bf16 (the API refuses the rest; refused again here rather than run by another kernel).
template <int kBucket>
bool run_decode_bucket(const Fa2DecodeParams& p, int bucket) {
  if constexpr (flash::decode_built(algo::KernelFamily::fa2, kBucket)) {
    if (bucket != kBucket) return false;
    if (p.shape.tag == arch::MmaTag::bf16)
      launch_fa2_decode<Fa2DecodeTraitsFor<kBucket, arch::MmaTag::bf16>>(p);
    else
      launch_fa2_decode<Fa2DecodeTraitsFor<kBucket, arch::MmaTag::fp16>>(p);
    return true;
  } else {
    return false;
  }
}

void run_fa2_decode(const Fa2DecodeParams& p, int bucket) {
  static_assert(sizeof(flash::kFa2DecodeBuckets) / sizeof(int) == 2);
  if (!run_decode_bucket<flash::kFa2DecodeBuckets[0]>(p, bucket) &&
      !run_decode_bucket<flash::kFa2DecodeBuckets[1]>(p, bucket))
    throw std::invalid_argument("fa2: the KV-cache path is not built for head_dim bucket " + std::to_string(bucket));
}

template void run_forward<algo::KernelFamily::fa2>(const Fa2ForwardParams&, int, algo::TileSet);
template void run_backward<algo::KernelFamily::fa2>(const FlashBackwardParams&, int, algo::TileSet);

}  // namespace flashproof::kernels::FP_TARGET
