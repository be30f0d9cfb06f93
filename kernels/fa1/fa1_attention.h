// The FA1 kernels as the harness implementation "fa1" (kernels/registry.cpp).
#pragma once

#include <memory>

#include "core/attention_impl.h"

namespace flashproof {

std::unique_ptr<AttentionImpl> make_fa1_attention();

}  // namespace flashproof
