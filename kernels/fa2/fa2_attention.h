// The FA2 kernels as harness implementations: "fa2" (atomic dQ accumulation) and
// "fa2-deterministic" (bitwise reproducible backward).
#pragma once

#include <memory>

#include "core/attention_impl.h"

namespace flashproof {

std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic);

}  // namespace flashproof
