// The FA2 kernels' parameters: the shared shape and tensors of kernels/flash/params.h, plus the
// backward's workspace. Filled and checked by the API (kernels/fa2/api.h); the kernels trust them.
#pragma once

#include <cstdint>

#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct Fa2ForwardParams {
  FlashShape shape;
  SeqTensor q, k, v, o;
  float* lse = nullptr;  // [batch, heads_q, seqlen_q], contiguous, natural log
};

struct Fa2BackwardParams {
  FlashShape shape;
  SeqTensor q, k, v, o, dout, dq, dk, dv;
  const float* lse = nullptr;  // the forward's [batch, heads_q, seqlen_q]
  // Workspace, allocated by the API:
  float* row_dot = nullptr;    // D = rowsum(dO * O), [batch, heads_q, seqlen_q]
  float* dq_accum = nullptr;   // fp32 dQ / scale, [splits][batch][seqlen_q][heads_q][head_dim]
  bool deterministic = false;  // splits = key blocks (one slice each) instead of 1 with atomics
};

}  // namespace flashproof::kernels
