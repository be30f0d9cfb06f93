// The FlashAttention-2 C++ API, in the spirit of FlashAttention-2's mha_fwd / mha_bwd. The tensor,
// option and buffer types are the flash kernels' shared ones (kernels/flash/api.h: target memory,
// layouts); every call validates its arguments and throws std::invalid_argument with a one-line
// message starting "fa2: "; see docs/fa2.md.
#pragma once

#include <string>

#include "kernels/flash/api.h"

namespace flashproof::kernels {

void fa2_forward(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options);
void fa2_backward(FlashTarget target, FlashDtype dtype, const FlashBackwardTensors& t, const FlashOptions& options);

// The checks the calls make, without running anything: empty when valid, else the one-line error.
std::string fa2_forward_error(FlashTarget target, const FlashForwardTensors& t, const FlashOptions& options);
std::string fa2_backward_error(FlashTarget target, const FlashBackwardTensors& t, const FlashOptions& options);

// The head-dim buckets compiled into this build (CMake option FLASHPROOF_FA2_HEAD_DIMS).
bool fa2_bucket_built(int bucket);
// ... and those with the soft cap and ALiBi (docs/fa2.md "Soft cap and ALiBi").
bool fa2_score_mod_built(int bucket);

}  // namespace flashproof::kernels
