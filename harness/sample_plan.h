// The sample of a sampled check (`--sample N`, docs/fuzz.md "Sampled checks"): which query rows
// (O, LSE, dQ) and key columns (dK, dV) are judged. Two parts:
//  - structured: the positions where attention bugs sit, in the first and the last (batch, head):
//    the first two and last two positions of the axis; the first and last row (key) of the first
//    two and last two tiles of every tile shape in kernels/algo/tile_configs.h (the last one
//    ragged); the neighbours of the mask's edges (where a row's first or last visible key leaves
//    the sequence's ends, the last row that sees no key and the first that sees one, and the same
//    for keys); the first, middle and last position of heads 1 and heads / 2 of the first batch
//    entry (inside a GQA group); positions 2^15 and 2^16 and their neighbours (16-bit indices); and wherever the
//    flat index of a tensor element, a row or a (batch, head) pair crosses 2^15, 2^16, 2^31 or 2^32
//    (32-bit offsets; the grid's 65535 limit), in whichever (batch, head) that falls;
//  - random: N rows and N columns from a seeded stream, in groups of up to 8 inside one random
//    128-aligned run of 128 positions, so that an emulated kernel runs few thread blocks for them.
// A bug confined to elements neither part reaches is missed (docs/fuzz.md says how often).
#pragma once

#include <cstdint>
#include <optional>

#include "core/output_sample.h"
#include "core/problem.h"

namespace flashproof {

// The sample for `random_count` seeded random rows and columns plus the structured part; the whole
// problem (every row and column) when random_count <= 0 or the sample would cover it anyway.
// `full` is then set and rows and cols are all ones.
struct SamplePlan {
  OutputSample sample;
  bool full = false;
};
SamplePlan plan_sample(const Problem& p, std::int64_t random_count, std::uint64_t seed);
// The sample a check judges: none (every output) when random_count <= 0 or the plan is full.
std::optional<OutputSample> judged_sample(const Problem& p, std::int64_t random_count, std::uint64_t seed);

}  // namespace flashproof
