// What the property checks share: building an Outcome, a case's inputs, and its harness check.
#pragma once

#include <optional>
#include <string>

#include "core/attention_impl.h"
#include "core/generators.h"
#include "harness/check.h"
#include "properties/properties.h"

namespace flashproof::properties {

inline Outcome fail(std::string why) { return {false, std::move(why), {}}; }
inline Outcome holds_with(std::string tag) { return {true, {}, {std::move(tag)}}; }

inline Inputs inputs_of(const Case& c) { return generate_inputs(c.problem, c.dist, c.seed); }

// The case's harness check; nullopt when the inputs are outside the valid input domain (nothing
// judged).
std::optional<CheckRecord> judged(AttentionImpl& impl, const Case& c);

// The record's check of tensor `name` ("O", "LSE", ...); null when it has none.
const TensorCheck* tensor_check(const CheckRecord& r, const std::string& name);

}  // namespace flashproof::properties
