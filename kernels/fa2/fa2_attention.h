// The FA2 kernels as harness implementations: "fa2" (atomic dQ accumulation) and
// "fa2-deterministic" (bitwise reproducible backward).
#pragma once

#include <memory>

#include "core/attention_impl.h"
#include "kernels/flash/api.h"

namespace flashproof {

std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic);

// A deliberately broken FA2 (tests and the harness's twins only; not registered): the soft cap's
// derivative left out of the backward, ALiBi's distance aligned top-left, or its bias with the
// wrong sign (kernels::FlashScoreModFlaw). Named "fa2~missing_softcap_derivative" and so on.
std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic, kernels::FlashScoreModFlaw flaw);
const char* fa2_score_mod_flaw_name(kernels::FlashScoreModFlaw flaw);

}  // namespace flashproof
