// The argument checks and the parameter filling that the flash kernels' APIs (FA1 and FA2) share,
// internal to the kernels. What differs between the kernels (the error prefix, which head-dim
// buckets exist and are built) comes in a FlashKernelLimits: flash_limits(family) for FA1 and FA2,
// or a made-up kernel's in the tests.
#pragma once

#include <string>

#include "kernels/algo/tile_configs.h"
#include "kernels/flash/api.h"
#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct FlashKernelLimits {
  const char* name;                // "fa1" or "fa2": prefix of every error message ("fa2: q is null")
  int (*bucket_of)(int head_dim);  // head-dim bucket serving head_dim, 0 when none
  bool (*bucket_built)(int bucket);
  const char* buckets_option;      // CMake option that narrows the built buckets, named in the error
};

// A family's limits as this build compiles it (kernels/flash/built_buckets.h).
const FlashKernelLimits& flash_limits(algo::KernelFamily family);

// Empty when the call is valid, else the one-line error: target, shapes (head_dim at most 256 and a
// multiple of 8, its bucket built, sequence lengths at most 2^29, batch and heads_q at most 65535,
// finite softmax_scale), each tensor's sizes and layout, then LSE.
std::string flash_forward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashForwardTensors& t,
                                const FlashOptions& options);
std::string flash_backward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashBackwardTensors& t,
                                 const FlashOptions& options);

// The kernels' shape of a validated call: default softmax scale, scale in log2 units, window sides
// clamped to the sequence lengths.
FlashShape make_flash_shape(FlashDtype dtype, const FlashTensor& q, const FlashTensor& k, const FlashOptions& options);
SeqTensor seq_tensor(const FlashTensor& t);
// The backward's parameters of a validated call; the workspace pointers and dq_mode are the
// kernel's to set.
FlashBackwardParams make_flash_backward_params(FlashDtype dtype, const FlashBackwardTensors& t,
                                               const FlashOptions& options);

}  // namespace flashproof::kernels
