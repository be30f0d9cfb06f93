// The harness's view of a flash kernel (FA1 or FA2): host tensors in, host tensors out, on the GPU
// when one is usable, otherwise on the emulator. Each kernel supplies its API calls and limits in a
// FlashKernelEntry; the staging of host tensors into target memory is the same for all of them.
#pragma once

#include <memory>
#include <string>

#include "core/attention_impl.h"
#include "kernels/flash/api.h"

namespace flashproof {

namespace kernels {
struct FlashKernelLimits;  // kernels/flash/validate.h
}

struct FlashKernelEntry {
  std::string name, description;
  const kernels::FlashKernelLimits* limits;
  void (*forward)(kernels::FlashTarget, kernels::FlashDtype, const kernels::FlashForwardTensors&,
                  const kernels::FlashOptions&);
  void (*backward)(kernels::FlashTarget, kernels::FlashDtype, const kernels::FlashBackwardTensors&,
                   const kernels::FlashOptions&);
  bool deterministic;  // passed as FlashOptions::deterministic; the backward is bitwise reproducible
  algo::TileSet tiles = algo::TileSet::shipped;  // passed as FlashOptions::tiles
};

std::unique_ptr<AttentionImpl> make_flash_attention(FlashKernelEntry entry);

}  // namespace flashproof
