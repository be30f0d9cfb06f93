// The campaign's cases: case `index` of a campaign is a pure function of (campaign seed, index)
// and the generator's settings, so every shard, every resumed run and every machine builds the
// same case for the same index. Shapes are odd and ragged (sequence lengths log-uniform with the
// tile edges weighted, every head dim 1..256, GQA/MQA groups, seqlen_q != seqlen_k both ways, no
// mask / causal / local), and values lean on the extremes: log-uniform logit scales up to and past
// the valid domain's edge (docs/spec.md), values near the fp16 maximum, one dominant key, all-equal rows, the maximum
// in the last key block, rows that see no key, subnormal inputs.
//
// The production profile (--profile production) draws the sizes of real models instead: long
// contexts, decode against a long KV cache, sequence lengths at the 16-bit index limits, more
// (batch, head) pairs than one grid dimension holds, ragged last tiles, many key blocks of
// online-softmax rescaling; head dims 64..256 (32 and 64 for many-heads), mostly normal values.
// Its cases are meant for a sampled check (CampaignSpec::sample).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/check.h"

namespace flashproof::fuzz {

// The size profile: `standard` (named "default": small odd shapes, extreme values),
// `production` (the sizes of real models; max_seqlen and max_work do not apply) or `packed`
// (packed batches, docs/spec.md "Packed batches": max_seqlen bounds each sequence, max_work the sum
// over the sequences). A profile of its own, so that the default profile's pinned draws stay.
// Inline: campaign_meta.cpp, which names the profile in campaign.json, builds without this
// library (the parser fuzzer's build, scripts/fuzz-parsers.sh).
// `score-mod` (the soft cap and ALiBi, docs/spec.md "Soft cap and ALiBi": the default profile's
// shapes and values, or the packed profile's batches, with a cap, slopes or both).
// `decode` (KV caches, docs/spec.md "KV caches": cache lengths, pages and split counts where decode
// kernels break; forward only; max_seqlen bounds the cache's capacity).
enum class Profile { standard, production, packed, score_mod, decode };
inline const char* profile_name(Profile p) {
  return p == Profile::production ? "production" : p == Profile::packed ? "packed"
                                               : p == Profile::score_mod ? "score-mod"
                                               : p == Profile::decode    ? "decode" : "default";
}
inline std::optional<Profile> parse_profile(std::string_view name) {
  if (name == "default") return Profile::standard;
  if (name == "production") return Profile::production;
  if (name == "packed") return Profile::packed;
  if (name == "score-mod") return Profile::score_mod;
  if (name == "decode") return Profile::decode;
  return std::nullopt;
}

struct GeneratorSettings {
  std::uint64_t seed = 0;
  std::vector<DType> dtypes{DType::fp16, DType::bf16};
  // production: a backward only where the kind allows it and its all-rows pass fits (generate_case).
  enum class Direction { forward, backward, both } direction = Direction::both;
  std::int64_t max_seqlen = 512;                  // default profile only
  std::int64_t max_work = std::int64_t{1} << 21;  // batch * heads_q * seqlen_q * seqlen_k * head_dim; default profile only
  Profile profile = Profile::standard;
};

// The production profile's limits. Every tensor (batch x seqlen x heads x head_dim) holds at most
// 2^26 elements, so a case's inputs and the check's dense per-element results stay within a few
// GiB. A backward needs seqlen_q x seqlen_k <= 2^28 and an all-rows pass of at most 2^34
// multiply-adds (batch x heads_q x seqlen_q x seqlen_k x head_dim): dK and dV of key j need P_ij of
// every row i, so even a sampled check computes every row of the reference and the baseline there
// (about 200 s at 2^34 on two cores).
inline constexpr std::int64_t kProductionMaxElements = std::int64_t{1} << 26;
inline constexpr std::int64_t kProductionMaxBackwardPairs = std::int64_t{1} << 28;
inline constexpr std::int64_t kProductionMaxBackwardWork = std::int64_t{1} << 34;
// A logit scale measured outside the check (a crash's record, an export's index) scans every pair:
// for production cases, not beyond this many multiply-adds (a long context's scan takes hours);
// the scale is then NaN ("nan" in the JSON).
inline constexpr double kProductionMaxLogitScanWork = 0x1p32;

struct FuzzCase {
  Case c;            // c.impl is left empty: every implementation of the campaign runs it
  std::string kind;  // default profile: normal, extreme-logits, near-dtype-max, dominant-key,
                     // equal-rows, max-in-last-block, masked-rows, subnormal; production:
                     // long-context, long-kv, index-limit, many-heads, ragged-tail,
                     // accumulated-rounding; packed: packed-mixed, packed-one-long,
                     // packed-tile-edges, packed-empty, packed-extreme-logits; score-mod:
                     // softcap-small, softcap-model, alibi-model, alibi-extreme, softcap-alibi,
                     // score-mod-packed; decode: decode-paged, decode-contiguous,
                     // decode-splits, decode-empty, decode-extreme-logits (docs/fuzz.md)
};

FuzzCase generate_case(const GeneratorSettings& s, std::uint64_t index);

// The kinds of a profile, in the generator's order.
const std::vector<std::string>& case_kinds(Profile p = Profile::standard);

}  // namespace flashproof::fuzz
