// The implementations available in this build (the naive baseline, fa2, fa2-deterministic and fa1,
// the kernels on a GPU when one is usable and emulated otherwise), plus any a user registers.
// Lookup by name for the CLI, the properties and the fuzz runner.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "core/attention_impl.h"

namespace flashproof {

const std::vector<AttentionImpl*>& implementations();
// The built-in kernels' other compiled tile sets, each an implementation of its own ("fa2@alternate-tiles";
// AttentionImpl::with_alternate_tiles), found by name but not in implementations(): campaigns and
// properties draw them as an option of their base (tile_variant), so every compiled tile set is judged
// on real cases without a separate pass.
const std::vector<AttentionImpl*>& tile_variants();
// The tile-set variant of the registered `base`, nullptr when it has none or is not registered.
AttentionImpl* tile_variant(const AttentionImpl& base);
AttentionImpl* find_implementation(std::string_view name);  // nullptr when unknown; tile variants too
// Adds a plug-in implementation (and its tile variant, when it has one whose name is free); throws
// std::invalid_argument when its name is taken.
// Not thread-safe: register before running checks.
void register_implementation(std::unique_ptr<AttentionImpl> impl);

}  // namespace flashproof
