// The FlashAttention-1 C++ API: the same calls, tensor types, options and errors as FA2's
// (kernels/fa2/api.h, kernels/flash/api.h), with messages starting "fa1: "; see docs/fa1.md.
// The backward is always deterministic (one thread block owns each head's dQ), so
// FlashOptions::deterministic changes nothing. FA1 has three head-dim buckets (64, 128, 256).
#pragma once

#include <string>

#include "kernels/flash/api.h"

namespace flashproof::kernels {

// query_splits: thread blocks per (batch, head) in the forward, each owning every splits-th query
// block; 0 picks enough to fill the target. The result is bitwise the same for every value.
void fa1_forward(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options,
                 int query_splits = 0);
void fa1_backward(FlashTarget target, FlashDtype dtype, const FlashBackwardTensors& t, const FlashOptions& options);

// The checks the calls make, without running anything: empty when valid, else the one-line error.
std::string fa1_forward_error(FlashTarget target, const FlashForwardTensors& t, const FlashOptions& options);
std::string fa1_backward_error(FlashTarget target, const FlashBackwardTensors& t, const FlashOptions& options);

// The head-dim buckets compiled into this build (CMake option FLASHPROOF_FA1_HEAD_DIMS).
bool fa1_bucket_built(int bucket);

}  // namespace flashproof::kernels
