// The implementations available in this build (naive baseline now; FA1/FA2 on a GPU or emulated
// as they land). Lookup by name for the CLI, the properties and the fuzz runner.
#pragma once

#include <string_view>
#include <vector>

#include "core/attention_impl.h"

namespace flashproof {

const std::vector<AttentionImpl*>& implementations();
AttentionImpl* find_implementation(std::string_view name);  // nullptr when unknown

}  // namespace flashproof
