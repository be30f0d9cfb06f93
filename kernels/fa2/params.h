// The FA2 forward's parameters (the backward's are the shared FlashBackwardParams of
// kernels/flash/params.h). Filled and checked by the API (kernels/fa2/api.h); the kernels trust them.
#pragma once

#include <cstdint>

#include "kernels/flash/params.h"

namespace flashproof::kernels {

struct Fa2ForwardParams {
  FlashShape shape;
  SeqTensor q, k, v, o;
  float* lse = nullptr;  // [batch, heads_q, seqlen_q], contiguous, natural log
  WantedOutputs wanted;  // emulated partial launches only (kernels/flash/wanted_outputs.h)
  ScoreModParams mod;    // the score-mod instantiations only (kernels/flash/params.h)
};

// Deliberately broken variants of the decode path (FlashOptions::decode_flaw, the same order), for
// the tests' twins only; none in every real call.
enum class DecodeFlaw : int {
  none,
  split_skips_last_block,       // each split visits one key block fewer than its share
  combine_without_empty_guard,  // the combine takes an empty split's LSE (-inf) as a normal one
  page_from_allocated_length,   // key range and page indices from the capacity, not the used length
  later_sequences_unwritten,    // with splits: the combine writes the first sequence only
  keys_before_append,           // the appended keys written, the key range from the lengths before
};

// A KV cache as the decode kernels read it (docs/fa2.md "Decoding"): per-sequence used lengths and
// the block table in target memory, the split count and its fp32 workspaces.
struct KvCacheParams {
  const std::int32_t* seqlens = nullptr;      // [batch] used keys; null: every sequence uses seqlen_k
  const std::int32_t* block_table = nullptr;  // [batch, pages_per_sequence]; null: contiguous
  int page_size = 0;                          // 0: contiguous ([batch, seqlen_k, heads_kv, d])
  int pages_per_sequence = 0;
  int num_splits = 1;
  // num_splits > 1: each split's O (normalised by its own l) and LSE (split_lse: -inf when empty),
  // [split][batch][heads_q][seqlen_q][head_dim] and [split][batch][heads_q][seqlen_q]; the combine
  // kernel writes O and LSE from them. Null with one split: the decode kernel writes O directly.
  float* partial_o = nullptr;
  float* partial_lse = nullptr;
  DecodeFlaw flaw = DecodeFlaw::none;
  // Appended keys (seqlen_new > 0): [batch, seqlen_new, heads_kv, d], written by fa2_append_kernel
  // into slots seqlens[b] - seqlen_new + t (seqlens are then the lengths after the append).
  SeqTensor k_new, v_new;
  int seqlen_new = 0;
};

// The decode forward: the dense forward's tensors with K and V the cache (contiguous, or the pool
// [num_pages, page_size, heads_kv, d] seen as a SeqTensor of batch = page). shape.seqlen_k is the
// capacity (pages_per_sequence * page_size when paged).
struct Fa2DecodeParams {
  FlashShape shape;
  SeqTensor q, k, v, o;
  float* lse = nullptr;  // [batch, heads_q, seqlen_q]
  KvCacheParams cache;
};

// Index of (split, batch, head, row) in the partial LSE; times head_dim, of the row in the partial O.
FP_HOST_DEVICE inline long long partial_index(const FlashShape& s, int split, int batch, int head, int row) {
  return ((static_cast<long long>(split) * s.batch + batch) * s.heads_q + head) * s.seqlen_q + row;
}

}  // namespace flashproof::kernels
