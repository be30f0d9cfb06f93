// The FA2 forward's parameters (the backward's are the shared FlashBackwardParams of
// kernels/flash/params.h). Filled and checked by the API (kernels/fa2/api.h); the kernels trust them.
#pragma once

#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct Fa2ForwardParams {
  FlashShape shape;
  SeqTensor q, k, v, o;
  float* lse = nullptr;  // [batch, heads_q, seqlen_q], contiguous, natural log
  WantedOutputs wanted;  // emulated partial launches only (kernels/flash/wanted_outputs.h)
  ScoreModParams mod;    // the score-mod instantiations only (kernels/flash/params.h)
};

}  // namespace flashproof::kernels
