// The implementations available in this build (the naive baseline now; FA1/FA2 on a GPU or
// emulated as they land), plus any a user registers. Lookup by name for the CLI, the properties
// and the fuzz runner.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/attention_impl.h"

namespace flashproof {

const std::vector<AttentionImpl*>& implementations();
AttentionImpl* find_implementation(std::string_view name);  // nullptr when unknown
// Adds a plug-in implementation; throws std::invalid_argument when its name is taken.
// Not thread-safe: register before running checks.
void register_implementation(std::unique_ptr<AttentionImpl> impl);

}  // namespace flashproof
