// The argument checks and the parameter filling that the flash kernels' APIs (FA1 and FA2) share,
// internal to the kernels. What differs between the kernels (the error prefix, which head-dim
// buckets exist and are built) comes in a FlashKernelLimits: flash_limits(family) for FA1 and FA2,
// or a made-up kernel's in the tests.
#pragma once

#include <cstdint>
#include <memory>
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
  // Whether the soft cap and ALiBi run in `bucket` (flash::score_mod_built); null: never (FA1).
  bool (*score_mod_built)(int bucket) = nullptr;
  // Whether the decode path (KV caches, paged K/V, split-KV) runs in `bucket`
  // (flash::decode_built); null: never (FA1).
  bool (*decode_built)(int bucket) = nullptr;
};

// A decode call's cache capacity per sequence: pages_per_sequence * page_size when paged (the
// table's length over the batch), else k's seqlen. For a call that passed the checks.
std::int64_t decode_capacity(const FlashForwardTensors& t, const FlashOptions& options);

// A family's limits as this build compiles it (kernels/flash/built_buckets.h).
const FlashKernelLimits& flash_limits(algo::KernelFamily family);

// Empty when the call is valid, else the one-line error. A decode call (FlashOptions::decode())
// is checked by its own rules first (docs/fa2.md "Decoding": forward only, not packed, no soft cap
// or ALiBi, shipped tiles, a decode bucket built, split count, page size, table entries inside the
// pool, cache lengths inside the capacity, every offset the kernels form within int32 where they
// form it in int), then as the dense call of its logical shape. Otherwise: target, shapes (head_dim at most 256 and a
// multiple of 8, its bucket built, sequence lengths at most 2^29, batch and heads_q at most 65535,
// finite softmax_scale), a packed batch's offsets, each tensor's sizes and layout, then LSE.
std::string flash_forward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashForwardTensors& t,
                                const FlashOptions& options);
std::string flash_backward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashBackwardTensors& t,
                                 const FlashOptions& options);

// The score modification of a validated call as the kernels take it (kernels/flash/params.h): the
// cap's constants and, with ALiBi, the slopes in log2 units uploaded to `slopes` (target memory,
// heads_q floats, kept alive by the caller for the call). Inactive when the options have neither.
ScoreModParams make_score_mod_params(FlashTarget target, const FlashOptions& options,
                                     std::unique_ptr<FlashBuffer>& slopes);

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

// A validated packed forward (FA1's or FA2's parameters p): for each sequence with query rows,
// `launch(one, seq)` gets p narrowed to the sequence (its shape, its tensors from its first row,
// its LSE into a [heads_q, seqlen_q] workspace), sets what its family adds and launches it; the
// LSE rows then go to their place in the storage's [heads_q, total_q].
template <class Params, class Launch>
void for_each_sequence_forward(FlashTarget target, const Params& p, const FlashOptions& options,
                               const std::vector<algo::SequenceSpan<int>>& sequences, Launch launch) {
  const FlashShape& storage = p.shape;
  FlashBuffer lse_rows(target, static_cast<std::size_t>(storage.heads_q) * longest_sequence(sequences).seqlen_q *
                                   sizeof(float));
  for (const algo::SequenceSpan<int>& seq : sequences) {
    if (seq.seqlen_q == 0) continue;  // no output
    Params one = p;
    one.shape = sequence_shape(storage, options, seq);
    one.q = rows_from(p.q, seq.q_begin), one.o = rows_from(p.o, seq.q_begin);
    one.k = rows_from(p.k, seq.k_begin), one.v = rows_from(p.v, seq.k_begin);
    one.lse = static_cast<float*>(lse_rows.data());
    launch(one, seq);
    copy_rows(target, p.lse + seq.q_begin, storage.seqlen_q, one.lse, seq.seqlen_q, seq.seqlen_q, storage.heads_q);
  }
}
// The backward's parameters of a validated call; the workspace pointers and dq_mode are the
// kernel's to set.
FlashBackwardParams make_flash_backward_params(FlashDtype dtype, const FlashBackwardTensors& t,
                                               const FlashOptions& options);

}  // namespace flashproof::kernels
