// The argument checks and the parameter filling that the flash kernels' APIs (FA1 and FA2) share,
// internal to the kernels. What differs between the kernels (the error prefix, which head-dim
// buckets exist and are built) comes in a FlashKernelLimits: flash_limits(family) for FA1 and FA2,
// or a made-up kernel's in the tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/algo/packed_batch.h"
#include "kernels/algo/tile_configs.h"
#include "kernels/flash/api.h"
#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct FlashKernelLimits {
  const char* name;                // "fa1" or "fa2": prefix of every error message ("fa2: q is null")
  int (*bucket_of)(int head_dim);  // head-dim bucket serving head_dim, 0 when none
  bool (*bucket_built)(int bucket);
  const char* buckets_option;      // CMake option that narrows the built buckets, named in the error
};

// A family's limits as this build compiles it (kernels/flash/built_buckets.h).
const FlashKernelLimits& flash_limits(algo::KernelFamily family);

// Empty when the call is valid, else the one-line error: target, shapes (head_dim at most 256 and a
// multiple of 8, its bucket built, sequence lengths at most 2^29, batch and heads_q at most 65535,
// finite softmax_scale), a packed batch's offsets, each tensor's sizes and layout, then LSE.
std::string flash_forward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashForwardTensors& t,
                                const FlashOptions& options);
std::string flash_backward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashBackwardTensors& t,
                                 const FlashOptions& options);

// The kernels' shape of a validated call: default softmax scale, scale in log2 units, window sides
// clamped to the sequence lengths.
FlashShape make_flash_shape(FlashDtype dtype, const FlashTensor& q, const FlashTensor& k, const FlashOptions& options);
SeqTensor seq_tensor(const FlashTensor& t);

// ---- packed batches (FlashOptions::cu_seqlens_*; docs/fa2.md "Packed batches") ----
// A validated packed call runs each sequence as the dense problem of its own lengths: one launch
// of the unchanged kernels per sequence, its tensors starting at its first row (batch 1), its LSE
// through a [heads_q, seqlen_q] workspace.

// The sequences of a validated call; empty for a dense one.
std::vector<algo::SequenceSpan<int>> packed_sequences(const FlashOptions& options);
// The longest sequence's lengths (query rows, keys), for sizing the per-sequence workspaces.
algo::SequenceSpan<int> longest_sequence(const std::vector<algo::SequenceSpan<int>>& sequences);
// The shape of one sequence alone: batch 1, its lengths, the window clamped to them as a dense call's.
FlashShape sequence_shape(const FlashShape& storage, const FlashOptions& options, const algo::SequenceSpan<int>& seq);
// t from its row `first_row` of batch 0 on: a sequence's rows as a batch-1 tensor.
SeqTensor rows_from(const SeqTensor& t, int first_row);

// The wanted outputs (partial launches) of one sequence, sliced out of the storage's.
struct SequenceWanted {
  std::vector<std::uint8_t> rows, cols;  // [heads_q][seqlen_q], [heads_kv][seqlen_k]; empty: all
  WantedOutputs view() const { return {rows.empty() ? nullptr : rows.data(), cols.empty() ? nullptr : cols.data()}; }
};
SequenceWanted sequence_wanted(const FlashOptions& options, const FlashShape& storage, const algo::SequenceSpan<int>& seq);

// The backward's parameters of one sequence of a packed call whose parameters are p: the
// sequence's shape and tensors alone, its LSE gathered into lse_rows ([heads_q, seqlen_q], of the
// longest sequence's size, as p's workspaces), `wanted`'s outputs.
FlashBackwardParams sequence_backward_params(FlashTarget target, const FlashBackwardParams& p, const FlashOptions& options,
                                             const algo::SequenceSpan<int>& seq, float* lse_rows,
                                             const SequenceWanted& wanted);

// `height` rows of `width` floats between arrays in target memory whose rows are `dst_pitch` and
// `src_pitch` floats apart: a sequence's LSE between [heads_q, total_q] and [heads_q, seqlen_q].
void copy_rows(FlashTarget target, float* dst, std::size_t dst_pitch, const float* src, std::size_t src_pitch,
               std::size_t width, std::size_t height);
// The backward's parameters of a validated call; the workspace pointers and dq_mode are the
// kernel's to set.
FlashBackwardParams make_flash_backward_params(FlashDtype dtype, const FlashBackwardTensors& t,
                                               const FlashOptions& options);

}  // namespace flashproof::kernels
