// The FA1 kernels' parameters: the shared shape and tensors of kernels/flash/params.h plus the
// forward's workspace, which carries every row's normalised state between key blocks (FA1 keeps O,
// l and m in global memory). Filled and checked by the API (kernels/fa1/api.h); the kernels trust them.
#pragma once

#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct Fa1ForwardParams {
  FlashShape shape;
  SeqTensor q, k, v, o;
  float* lse = nullptr;  // [batch, heads_q, seqlen_q], contiguous, natural log
  // Workspace, allocated by the API. A row's entries are valid from its first visited key block on.
  float* o_accum = nullptr;  // normalised O so far, fp32, [batch, heads_q, seqlen_q, head_dim]
  float* row_max = nullptr;  // running max m (log2 units), [batch, heads_q, seqlen_q]
  float* row_sum = nullptr;  // running sum l relative to m, [batch, heads_q, seqlen_q]
  // CTAs per (batch, head): split s owns the query blocks s, s + splits, ... (1 is FA1's grid).
  int query_splits = 1;
};

}  // namespace flashproof::kernels
