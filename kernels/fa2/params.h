// What the FA2 kernels receive: pointers into target memory (device memory on the GPU, host memory
// under the emulator), element strides, sizes, the softmax scale and the mask window. Filled and
// checked by the API (kernels/fa2/api.h); the kernels trust them.
#pragma once

#include <cstdint>

#include "kernels/arch/mma.h"

namespace flashproof::kernels {

// A [batch, seqlen, heads, head_dim] tensor of 16-bit elements; the head_dim stride is 1.
struct SeqTensor {
  std::uint16_t* data = nullptr;
  long long batch_stride = 0, row_stride = 0, head_stride = 0;

  FP_HOST_DEVICE std::uint16_t* at(int b, int row, int head) const {
    return data + b * batch_stride + row * row_stride + head * head_stride;
  }
};

struct Fa2Shape {
  int batch = 1, seqlen_q = 1, seqlen_k = 1, heads_q = 1, heads_kv = 1, head_dim = 8;
  arch::MmaTag tag = arch::MmaTag::fp16;
  float scale_log2 = 0;  // softmax_scale * log2(e), rounded to fp32
  float softmax_scale = 0;
  int window_left = -1, window_right = -1;  // bottom-right aligned; < 0: unbounded
};

struct Fa2ForwardParams {
  Fa2Shape shape;
  SeqTensor q, k, v, o;
  float* lse = nullptr;  // [batch, heads_q, seqlen_q], contiguous, natural log
};

struct Fa2BackwardParams {
  Fa2Shape shape;
  SeqTensor q, k, v, o, dout, dq, dk, dv;
  const float* lse = nullptr;  // the forward's [batch, heads_q, seqlen_q]
  // Workspace, allocated by the API:
  float* row_dot = nullptr;    // D = rowsum(dO * O), [batch, heads_q, seqlen_q]
  float* dq_accum = nullptr;   // fp32 dQ / scale, [splits][batch][seqlen_q][heads_q][head_dim]
  bool deterministic = false;  // splits = key blocks (one slice each) instead of 1 with atomics
};

}  // namespace flashproof::kernels
