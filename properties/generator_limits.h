// How large and of which kinds the property suite's generated cases are (properties/generators.h
// draws them): free of RapidCheck, so that the properties' list (properties/properties.h) and its
// users outside properties/ never see it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attention_impl.h"
#include "core/dtype.h"

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

}  // namespace flashproof::properties
