// The naive same-dtype attention: the baseline of the "k x baseline error" rule. It does what an
// unfused framework implementation does: scores in fp32 from dtype inputs, softmax in fp32, P
// rounded to the dtype, O accumulated in fp32 and rounded to the dtype; the backward likewise
// (dP, dS rounded to the dtype between the fp32-accumulated products).
#pragma once

#include <memory>

#include "core/attention_impl.h"

namespace flashproof {

std::unique_ptr<AttentionImpl> make_naive_attention();

}  // namespace flashproof
