// What the flash kernels (FA1 and FA2) receive: pointers into target memory (device memory on the
// GPU, host memory under the emulator), element strides, sizes, the softmax scale and the mask
// window. Filled and checked by the APIs (kernels/fa1/api.h, kernels/fa2/api.h); the kernels trust
// them.
#pragma once

#include <cstdint>

#include "kernels/algo/score_mod.h"
#include "kernels/arch/mma.h"
#include "kernels/flash/wanted_outputs.h"

namespace flashproof::kernels {

// A [batch, seqlen, heads, head_dim] tensor of 16-bit elements; the head_dim stride is 1.
struct SeqTensor {
  std::uint16_t* data = nullptr;
  long long batch_stride = 0, row_stride = 0, head_stride = 0;

  FP_HOST_DEVICE std::uint16_t* at(int b, int row, int head) const {
    return data + b * batch_stride + row * row_stride + head * head_stride;
  }
};

struct FlashShape {
  int batch = 1, seqlen_q = 1, seqlen_k = 1, heads_q = 1, heads_kv = 1, head_dim = 8;
  arch::MmaTag tag = arch::MmaTag::fp16;
  float scale_log2 = 0;  // softmax_scale * log2(e), rounded to fp32
  float softmax_scale = 0;
  int window_left = -1, window_right = -1;  // bottom-right aligned; < 0: unbounded
};

// The soft cap and ALiBi (algo/score_mod.h) as the FA2 kernels receive them: fp32 constants in log2
// units, filled by the API from FlashOptions. Read only by the score-mod instantiations (Traits::
// kScoreMod); the dense ones never look at them. Placed last in the parameter structs, so that the
// dense kernels' parameter offsets, and so their machine code, stay as they were.
struct ScoreModParams {
  float cap_log2 = 0;                 // fl(c * fl(log2 e)); 0: no cap
  float inv_cap_log2 = 0;             // fl(1 / cap_log2)
  const float* slope_log2 = nullptr;  // [heads_q] in target memory, fl(slope_h * fl(log2 e)); null: no ALiBi
  // Deliberately broken variants (FlashOptions::score_mod_flaw), for the tests' twins only:
  bool cap_derivative = true;   // false: the backward leaves out dS's factor 1 - t^2
  bool alibi_top_left = false;  // true: the distance |i - j| (offset 0) instead of |i + seqlen_k - seqlen_q - j|

  FP_HOST_DEVICE bool active() const { return cap_log2 != 0 || slope_log2 != nullptr; }
  // Head `head`'s modification in a launch of shape s (its sequence's lengths: a packed batch runs
  // one launch per sequence, so the offset is that sequence's).
  FP_HOST_DEVICE algo::HeadScoreModLog2 for_head(int seqlen_q, int seqlen_k, int head) const {
    return {cap_log2, inv_cap_log2, slope_log2 == nullptr ? 0.0f : slope_log2[head],
            alibi_top_left ? 0 : seqlen_k - seqlen_q};
  }
};

// How the backward adds a key block's dQ contribution to the fp32 accumulator.
enum class DqAccumulation {
  atomic,  // one accumulator, atomicAdd (FA2: key blocks run in parallel)
  slices,  // one slice per key block, summed in a fixed order afterwards (FA2 deterministic)
  owned,   // one accumulator, plain read-modify-write (FA1: one thread block owns a head's rows)
};

struct FlashBackwardParams {
  FlashShape shape;
  SeqTensor q, k, v, o, dout, dq, dk, dv;
  const float* lse = nullptr;  // the forward's [batch, heads_q, seqlen_q]
  // Workspace, allocated by the API:
  float* row_dot = nullptr;   // D = rowsum(dO * O), [batch, heads_q, seqlen_q]
  float* dq_accum = nullptr;  // fp32 dQ / scale, [slices][batch][seqlen_q][heads_q][head_dim]
  DqAccumulation dq_mode = DqAccumulation::atomic;
  WantedOutputs wanted;  // emulated partial launches only (kernels/flash/wanted_outputs.h)
  ScoreModParams mod;    // FA2's score-mod instantiations only (FA1 leaves it inactive)
};

// Index of a query row's LSE (and of the backward's per-row D) in [batch, heads_q, seqlen_q].
FP_HOST_DEVICE inline long long lse_index(const FlashShape& s, int batch, int head, int row) {
  return (static_cast<long long>(batch) * s.heads_q + head) * s.seqlen_q + row;
}

}  // namespace flashproof::kernels
