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

// A deliberately broken FA2 decode path (tests and the harness's twins only; not registered): a
// split one key block short, the combine without its empty-split guard, the cache read to its
// capacity instead of its used length, or later sequences left unwritten with splits
// (kernels::FlashDecodeFlaw; docs/fa2.md "Decoding"). Named "fa2~split_skips_last_block" and so on.
std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic, kernels::FlashDecodeFlaw flaw);
const char* fa2_decode_flaw_name(kernels::FlashDecodeFlaw flaw);

}  // namespace flashproof
