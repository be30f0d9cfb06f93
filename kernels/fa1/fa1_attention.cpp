// The FA1 kernels as a harness implementation, through the shared flash adapter
// (kernels/flash/flash_attention.h): on the GPU when one is usable, otherwise on the emulator.
#include "kernels/fa1/fa1_attention.h"

#include "kernels/fa1/api.h"
#include "kernels/flash/flash_attention.h"
#include "kernels/flash/validate.h"

namespace flashproof {
namespace {

void forward(kernels::FlashTarget target, kernels::FlashDtype dtype, const kernels::FlashForwardTensors& t,
             const kernels::FlashOptions& options) {
  kernels::fa1_forward(target, dtype, t, options);
}

}  // namespace

std::unique_ptr<AttentionImpl> make_fa1_attention() {
  return make_flash_attention({
      .name = "fa1",
      .description = "FlashAttention-1 kernels of this repository (K/V outer loop; tensor cores; fp16, bf16)",
      .limits = &kernels::flash_limits(algo::KernelFamily::fa1),
      .forward = &forward,
      .backward = &kernels::fa1_backward,
      .deterministic = true,
  });
}

}  // namespace flashproof
