// The campaign's cases: case `index` of a campaign is a pure function of (campaign seed, index)
// and the generator's settings, so every shard, every resumed run and every machine builds the
// same case for the same index. Shapes are odd and ragged (sequence lengths log-uniform with the
// tile edges weighted, every head dim 1..256, GQA/MQA groups, seqlen_q != seqlen_k both ways, no
// mask / causal / local), and values lean on the extremes: log-uniform logit scales up to and past
// SPEC's domain edge, values near the fp16 maximum, one dominant key, all-equal rows, the maximum
// in the last key block, rows that see no key, subnormal inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/check.h"

namespace flashproof::fuzz {

struct GeneratorSettings {
  std::uint64_t seed = 0;
  std::vector<DType> dtypes{DType::fp16, DType::bf16};
  enum class Direction { forward, backward, both } direction = Direction::both;
  std::int64_t max_seqlen = 512;
  std::int64_t max_work = std::int64_t{1} << 21;  // batch * heads_q * seqlen_q * seqlen_k * head_dim
};

struct FuzzCase {
  Case c;            // c.impl is left empty: every implementation of the campaign runs it
  std::string kind;  // normal, extreme-logits, near-dtype-max, dominant-key, equal-rows,
                     // max-in-last-block, masked-rows, subnormal (docs/fuzz.md)
};

FuzzCase generate_case(const GeneratorSettings& s, std::uint64_t index);

// The kinds, in the generator's order.
const std::vector<std::string>& case_kinds();

}  // namespace flashproof::fuzz
