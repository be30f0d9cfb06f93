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
  // The soft cap and ALiBi are declared (Support::softcap, ::alibi) when the kernel has them
  // (limits->score_mod_built) and the tiles are the shipped ones; a problem in a head-dim bucket
  // without them is unsupported (unsupported_reason). score_mod_flaw: a deliberately broken variant
  // (tests and the harness's twins only), passed as FlashOptions::score_mod_flaw.
  kernels::FlashScoreModFlaw score_mod_flaw = kernels::FlashScoreModFlaw::none;
  // KV caches (contiguous and paged) and split-KV are declared (Support::kv_cache, ::paged) when the
  // kernel has the decode path (limits->decode_built) and the tiles are the shipped ones.
  // decode_flaw: a deliberately broken variant (tests and twins only), FlashOptions::decode_flaw.
  kernels::FlashDecodeFlaw decode_flaw = kernels::FlashDecodeFlaw::none;
};

std::unique_ptr<AttentionImpl> make_flash_attention(FlashKernelEntry entry);

}  // namespace flashproof
