// The check of each property in the registry (properties.cpp), by the file that holds it. Each
// returns whether the property holds on the case and, if not, why in one line.
#pragma once

#include <cstdint>

#include "core/attention_impl.h"
#include "harness/check.h"
#include "properties/properties.h"

namespace flashproof::properties::checks {

// differential_properties.cpp: the harness verdicts.
Outcome differential(AttentionImpl& impl, const Case& c);
Outcome accuracy_regression(AttentionImpl& impl, const Case& c);

// metamorphic_properties.cpp: transformed inputs against the untransformed run.
Outcome key_value_permutation(AttentionImpl& impl, const Case& c);
Outcome query_permutation(AttentionImpl& impl, const Case& c);
Outcome value_scaling(AttentionImpl& impl, const Case& c);
Outcome prefix_independence(AttentionImpl& impl, const Case& c);
Outcome gqa_equals_mha(AttentionImpl& impl, const Case& c);
Outcome batch_independence(AttentionImpl& impl, const Case& c);
Outcome packed_equals_sequences(AttentionImpl& impl, const Case& c);
// score_mod_properties.cpp: the soft cap and ALiBi.
Outcome score_mod_differential(AttentionImpl& impl, const Case& c);
Outcome softcap_infinity(AttentionImpl& impl, const Case& c);
Outcome page_order_invariance(AttentionImpl& impl, const Case& c);

// determinism_properties.cpp: repeated runs under explored emulator schedules.
Outcome forward_determinism(AttentionImpl& impl, const Case& c);
Outcome backward_determinism(AttentionImpl& impl, const Case& c);

// empty_rows_property.cpp
Outcome empty_rows(AttentionImpl& impl, const Case& c);

// memory_property.cpp
Outcome memory(AttentionImpl& impl, const Case& c);

// fa1_fa2_agreement.cpp (with properties::matches_fa2)
Outcome fa1_matches_fa2(AttentionImpl& impl, const Case& c);

// tile_independence_property.cpp
// Sequences longer than the alternate forward's 32-key blocks and backward's 32-row blocks, so the
// shipped and the alternate shapes split every case differently.
constexpr std::int64_t kTileIndependenceMinSeqlen = 33;
Outcome tile_independence(AttentionImpl& impl, const Case& c);

// The gradient check is properties::gradient_finite_differences (gradient_check.h).

}  // namespace flashproof::properties::checks
