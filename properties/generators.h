// RapidCheck generators of check cases for the property suite: shapes that cross every tile
// boundary (sequence lengths and head dims around 16, 32, 64, 128, 192, 256, and 1), GQA ratios,
// no mask / causal / local windows, seqlen_q != seqlen_k both ways, the input distributions of
// core/generators.h with extreme logits log-uniform up to the edge of the valid input domain. Every choice
// shrinks towards the simplest case (small sizes, no mask, normal inputs).
#pragma once

#include <rapidcheck.h>

#include <ostream>
#include <string>
#include <vector>

#include "core/attention_impl.h"
#include "harness/check.h"
#include "properties/generator_limits.h"

namespace flashproof::properties {

// Cases for `impl` (impl name in Case::impl). mask: none forces no mask (the permutation
// properties), masked forces causal or local, local a window bounded on at least one side that is
// not causal (keys no row sees are common then).
rc::Gen<Case> gen_case(const AttentionImpl& impl, const GenLimits& limits, MaskChoice mask = MaskChoice::any);

// The case with what `impl` declares of the score modification (docs/spec.md "Soft cap and
// ALiBi"), drawn from the case's seed: a cap from 1 to 50 (log-uniform), the models' slopes or,
// one case in four, slopes from 2^-20 to 2^6 of either sign (the score-mod-differential property,
// bound_tightness --score-mod).
Case with_score_mod(const AttentionImpl& impl, const Case& c);

// The labels RC_CLASSIFY reports per case: dtype, mask kind, GQA, seqlen order, distribution.
std::vector<std::string> case_tags(const Case& c);

}  // namespace flashproof::properties

namespace flashproof {
// RapidCheck prints counterexamples with this (found by argument-dependent lookup).
void showValue(const Case& c, std::ostream& os);
}  // namespace flashproof
