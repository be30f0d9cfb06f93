// RapidCheck generators of check cases for the property suite: shapes that cross every tile
// boundary (sequence lengths and head dims around 16, 32, 64, 128, 192, 256, and 1), GQA ratios,
// no mask / causal / local windows, seqlen_q != seqlen_k both ways, the input distributions of
// core/generators.h with extreme logits log-uniform up to the edge of the valid input domain. Every choice
// shrinks towards the simplest case (small sizes, no mask, normal inputs).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/attention_impl.h"
#include "harness/check.h"

namespace flashproof::properties {

// How big the generated cases may get: emulated kernels are thousands of times slower than the
// host baseline, so their cases are kept small enough for the CI budget.
struct GenLimits {
  std::int64_t min_seqlen = 1;  // both sequence lengths; work above max_work is allowed to keep it
  std::int64_t max_seqlen = 300;
  // When > 0, seqlen_k alone is drawn from [min_seqlen_k, max(max_seqlen, min_seqlen_k + 100)] and
  // kept there (seqlen_q is halved instead).
  std::int64_t min_seqlen_k = 0;
  std::int64_t max_work = std::int64_t{1} << 22;  // batch * heads_q * seqlen_q * seqlen_k * head_dim
  std::vector<DType> dtypes;                      // those the implementation supports
  bool backward = true;
};

// Limits for an implementation: its dtypes, and smaller cases when it is not a host one.
GenLimits limits_for(const AttentionImpl& impl, bool backward);

enum class MaskChoice { any, none, masked, local };

// Cases for `impl` (impl name in Case::impl). mask: none forces no mask (the permutation
// properties), masked forces causal or local, local a window bounded on at least one side that is
// not causal (keys no row sees are common then).
rc::Gen<Case> gen_case(const AttentionImpl& impl, const GenLimits& limits, MaskChoice mask = MaskChoice::any);

// The labels RC_CLASSIFY reports per case: dtype, mask kind, GQA, seqlen order, distribution.
std::vector<std::string> case_tags(const Case& c);

}  // namespace flashproof::properties

namespace flashproof {
// RapidCheck prints counterexamples with this (found by argument-dependent lookup).
void showValue(const Case& c, std::ostream& os);
}  // namespace flashproof
