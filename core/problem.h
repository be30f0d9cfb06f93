// One attention problem: shapes, dtype, softmax scale and mask (docs/spec.md "Semantics").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"

namespace flashproof {

struct Problem {
  std::int64_t batch = 1;
  std::int64_t heads_q = 1;
  std::int64_t heads_kv = 1;
  std::int64_t seqlen_q = 1;
  std::int64_t seqlen_k = 1;
  std::int64_t head_dim = 64;
  DType dtype = DType::fp16;
  // fp32 softmax scale; unset means 1/sqrt(head_dim) rounded to fp32.
  std::optional<float> scale;
  // Bottom-right aligned window; a negative side is unbounded. Causal is (-1, 0).
  std::int64_t window_left = -1;
  std::int64_t window_right = -1;
  // A packed batch (docs/spec.md "Packed batches"): B + 1 cumulative offsets each, from 0 up to
  // seqlen_q (seqlen_k), non-decreasing; sequence b's rows are [cu_seqlens_q[b], cu_seqlens_q[b+1]).
  // The tensors then have batch 1 (FlashAttention-2's varlen layout). Both empty: a dense batch.
  std::vector<std::int64_t> cu_seqlens_q;
  std::vector<std::int64_t> cu_seqlens_k;
  // The score modification (docs/spec.md "Soft cap and ALiBi", kernels/algo/score_mod.h): the soft
  // cap c (finite, > 0; unset: none) and ALiBi's slope per query head (finite; empty: none).
  std::optional<float> softcap;
  std::vector<float> alibi_slopes;
  // A KV cache (docs/spec.md "KV caches"; forward only): sequence b of the batch uses the first
  // cache_seqlens[b] keys (0 <= that <= seqlen_k, the cache's capacity per sequence) and its query
  // rows are aligned to their end, as a packed batch's are; the rest of the cache is unused and may
  // hold anything, NaN included. Empty: every sequence uses all seqlen_k keys.
  std::vector<std::int64_t> cache_seqlens;
  // A paged cache (page_size > 0, a multiple of 16 up to 256): K and V are a pool [num_pages,
  // page_size, heads_kv, head_dim] and sequence b's key j lies in page
  // block_table[b * pages_per_sequence() + j / page_size], slot j % page_size; seqlen_k is a
  // multiple of page_size, every entry in [0, num_pages) (any order, pages shared between
  // sequences). page_size 0: K and V are [batch, seqlen_k, heads_kv, head_dim].
  std::int64_t page_size = 0;
  std::int64_t num_pages = 0;
  std::vector<std::int64_t> block_table;
  // Split-KV (Flash-Decoding), a KV-cache problem's request to an implementation that splits its
  // keys: this many splits (1 to max_splits); 0 leaves the count to the implementation. The result
  // is the same attention whatever the count.
  std::int64_t num_splits = 0;
  // Appended keys (a KV-cache problem with cache_seqlens): the implementation receives seqlen_new
  // new keys and values per sequence ([batch, seqlen_new, heads_kv, head_dim]), writes them into the
  // cache at slots cache_seqlens[b] .. + seqlen_new - 1 and then attends over the
  // cache_seqlens[b] + seqlen_new keys (FlashAttention-2's k, v of flash_attn_with_kvcache). 0: none.
  std::int64_t seqlen_new = 0;

  static constexpr std::int64_t max_head_dim = 256;
  static constexpr std::int64_t max_elements = std::int64_t{1} << 34;
  static constexpr std::int64_t max_page_size = 256;
  static constexpr std::int64_t max_splits = 128;

  // The six sizes with their record names, in the order every record lists them (case files, the
  // check's record, the exchange's case.json, Python's params): one list, so no writer misses one.
  std::array<std::pair<const char*, std::int64_t>, 6> sizes() const {
    return {{{"batch", batch}, {"heads_q", heads_q}, {"heads_kv", heads_kv},
             {"seqlen_q", seqlen_q}, {"seqlen_k", seqlen_k}, {"head_dim", head_dim}}};
  }

  // Empty when valid; otherwise one line naming the problem, e.g.
  // "heads_q (6) must be a multiple of heads_kv (4)".
  std::string validate() const;

  float softmax_scale() const;  // the exact fp32 value every implementation and the reference use
  bool causal() const { return window_left < 0 && window_right == 0; }
  bool has_mask() const { return window_left >= 0 || window_right >= 0; }
  std::int64_t group_size() const { return heads_q / heads_kv; }
  std::int64_t kv_head(std::int64_t h) const { return h / group_size(); }
  // Dense problems only: a packed batch aligns each sequence to its own end (algo/row_keys.h).
  std::int64_t mask_offset() const { return seqlen_k - seqlen_q; }
  bool packed() const { return !cu_seqlens_q.empty(); }
  bool alibi() const { return !alibi_slopes.empty(); }
  bool score_mod() const { return softcap.has_value() || alibi(); }
  bool kv_cache() const { return !cache_seqlens.empty() || page_size > 0; }
  bool paged() const { return page_size > 0; }
  std::int64_t pages_per_sequence() const { return paged() ? seqlen_k / page_size : 0; }
  // Keys sequence b's cache holds before the call: cache_seqlens[b], or seqlen_k without lengths.
  std::int64_t stored_keys(std::int64_t b) const {
    return cache_seqlens.empty() ? seqlen_k : cache_seqlens[static_cast<std::size_t>(b)];
  }
  // Keys sequence b attends over: those stored and the appended ones.
  std::int64_t used_keys(std::int64_t b) const { return stored_keys(b) + seqlen_new; }
  bool appends() const { return seqlen_new > 0; }
  // The appended keys and values as the implementation receives them.
  std::array<std::int64_t, 4> new_kv_shape() const { return {batch, seqlen_new, heads_kv, head_dim}; }
  std::int64_t sequences() const { return packed() ? static_cast<std::int64_t>(cu_seqlens_q.size()) - 1 : batch; }
  // The longest sequence's lengths (seqlen_q and seqlen_k for a dense problem): what one row's and
  // one key's sums run over.
  std::int64_t max_seqlen_q() const;
  std::int64_t max_seqlen_k() const;

  // Layouts of docs/spec.md "Semantics" (row-major, contiguous).
  std::array<std::int64_t, 4> q_shape() const { return {batch, seqlen_q, heads_q, head_dim}; }
  // K and V as the implementation receives them: a paged cache's pool, else [b, sk, hkv, d].
  std::array<std::int64_t, 4> kv_shape() const {
    if (paged()) return {num_pages, page_size, heads_kv, head_dim};
    return {batch, seqlen_k, heads_kv, head_dim};
  }
  std::array<std::int64_t, 4> lse_shape() const { return {batch, heads_q, seqlen_q, 1}; }

  std::string describe() const;  // one line, e.g. "fp16 b=1 hq=2 hkv=1 sq=5 sk=7 d=64 causal";
                                 // a packed batch adds its sequences' lengths

  bool operator==(const Problem&) const = default;
};

// The attention a KV-cache problem computes, as the packed batch of its sequences (docs/spec.md "KV
// caches"): batch 1, sequence b's seqlen_q rows and its cache_seqlens[b] used keys, cache and pages
// dropped; the problem itself when it has no cache. What the reference, the bounds, the envelopes
// and the naive baseline judge and compute; the rows of O and LSE are those of the cache problem in
// the same order (O's storage is the same, LSE's [b][h][i] becomes [0][h][b * seqlen_q + i]).
// Where every sequence uses no key, one more sequence of no rows and one key keeps seqlen_k >= 1.
Problem logical_problem(const Problem& p);

// ALiBi's slopes as the models that use it set them (Press et al., "Train Short, Test Long"): for
// n heads and m = the largest power of 2 <= n, 2^(-8 (h + 1) / m) for h < m, then the odd steps
// 2^(-4 (2 h + 1) / m) of 2m heads for the rest. Rounded to fp32.
std::vector<float> standard_alibi_slopes(std::int64_t heads);

// ---- A validated problem ----
// A Problem that passed validate(), as a type: the pipeline's stages (generate_inputs, the
// reference, the bounds, the envelopes, run_implementation, prepare_case) take a ValidProblem and
// never validate again. Each entry (run_check, a case-file or exchange reader, the command line,
// Python, the case generator) makes one from the Problem it was given; a caller that holds only a
// Problem converts it at the call, which validates there (the conversion is implicit, so such a
// call reads as before and still refuses an invalid problem with validate()'s message).
class ValidProblem {
 public:
  // Throws std::invalid_argument(validate()'s message) when p is invalid.
  ValidProblem(const Problem& p);  // NOLINT(google-explicit-constructor): validation at the boundary
  // The same with a prefix before the message (e.g. "generate_inputs: ").
  ValidProblem(const Problem& p, const char* prefix);

  const Problem& get() const { return p_; }
  operator const Problem&() const { return p_; }  // NOLINT(google-explicit-constructor)
  const Problem* operator->() const { return &p_; }
  bool operator==(const ValidProblem& o) const { return p_ == o.p_; }

 private:
  Problem p_;
};

// How many times Problem::validate() has run on this thread (tests of "validated once").
std::uint64_t validations_on_this_thread();

}  // namespace flashproof
