// The FA2 kernels as harness implementations, through the shared flash adapter
// (kernels/flash/flash_attention.h): host tensors staged into target memory, on the GPU when one is
// usable, otherwise on the emulator.
#include "kernels/fa2/fa2_attention.h"

#include "kernels/fa2/api.h"
#include "kernels/flash/flash_attention.h"
#include "kernels/flash/validate.h"

namespace flashproof {

std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic) {
  return make_flash_attention({
      .name = deterministic ? "fa2-deterministic" : "fa2",
      .description = deterministic ? "FlashAttention-2 kernels of this repository, deterministic backward (no atomics)"
                                   : "FlashAttention-2 kernels of this repository (tensor cores; fp16, bf16)",
      .limits = &kernels::flash_limits(algo::KernelFamily::fa2),
      .forward = &kernels::fa2_forward,
      .backward = &kernels::fa2_backward,
      .deterministic = deterministic,
  });
}

}  // namespace flashproof
