// A KV-cache problem's keys and values as an implementation receives them (docs/spec.md "KV
// caches"), and the moves between that layout and its logical packed problem's (logical_problem,
// core/problem.h), which the reference, the bounds and the baselines judge and compute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention_impl.h"
#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof {

struct KvCacheInputs {
  Problem problem;  // the KV-cache problem the implementation is given
  HostTensor k, v;  // problem.kv_shape(): the contiguous cache, or the page pool
  // Appended keys and values (problem.appends()): problem.new_kv_shape(); empty otherwise. Their
  // slots in k, v are unused (NaN) until the implementation writes them.
  HostTensor k_new, v_new;
};

// Where sequence b's key j (j < used_keys(b)) lies in K and V: [first][second] of kv_shape().
struct CacheSlot {
  std::int64_t first, second;
};
CacheSlot cache_slot(const Problem& p, std::int64_t b, std::int64_t j);

// A block table of `batch` sequences of `per_sequence` pages each over a pool of num_pages pages:
// entry e is page e mod num_pages (pages in order; shared where the pool is smaller), or, with a
// nonzero shuffle_seed, that entry of a seeded permutation of the pool repeated. Valid for
// num_pages >= 1.
std::vector<std::int64_t> page_table(std::int64_t batch, std::int64_t per_sequence, std::int64_t num_pages,
                                     std::uint64_t shuffle_seed);

// The bits of every unused slot and unused page of a generated cache: a NaN in each dtype, so that
// an implementation letting one into an output shows.
std::uint32_t unused_cache_bits(DType t);

// The cache of KV-cache problem p holding the logical keys and values k, v ([1, total used keys,
// heads_kv, head_dim], logical_problem(p)'s): every stored slot written, every other slot NaN, and
// each sequence's last seqlen_new logical keys in k_new, v_new. Where pages are shared the later
// sequence's keys are those the page holds (the generators give shared pages equal contents).
KvCacheInputs cache_inputs(const ValidProblem& p, const HostTensor& k, const HostTensor& v);

// Writes the appended keys and values into the cache (docs/spec.md "KV caches"): sequence b's new
// key t into slot cache_seqlens[b] + t. What an implementation does before attending; the harness
// compares the cache it leaves with this.
void append_to_cache(const Problem& p, const HostTensor& k_new, const HostTensor& v_new, HostTensor& k_cache,
                     HostTensor& v_cache);

// Empty when `after` (K or V as an implementation left it) equals `expected` bit for bit; else one
// line naming the first differing element, e.g. "K cache[3, 5, 0, 2] holds 0x7e01, expected 0x3c00".
std::string cache_difference(const char* name, const HostTensor& after, const HostTensor& expected);

// The logical keys (or values) of a cache: the inverse of cache_inputs, for routes that receive a
// cache from outside. A contiguous [1, total used, heads_kv, head_dim] tensor.
HostTensor logical_keys(const ValidProblem& p, const HostTensor& cache);

// Q, O ([batch, seqlen_q, ...]) as a view of their logical [1, batch * seqlen_q, ...] tensor (the
// same storage order), and back.
HostTensor cache_rows_view(const Problem& p, const HostTensor& logical);
HostTensor logical_rows_view(const HostTensor& rows);
// LSE [batch, heads_q, seqlen_q] -> the logical [1, heads_q, batch * seqlen_q] (a copy), and back.
HostTensor logical_lse(const Problem& p, const HostTensor& lse);
void write_cache_lse(const Problem& p, const HostTensor& logical, HostTensor& lse);

// The forward of KV-cache problem p computed by `logical` on its logical packed problem: the keys
// gathered through the cache, O and LSE written back. For implementations that do not read caches
// themselves (the naive baseline; a user's callable may do the same).
void forward_through_logical(AttentionImpl& logical, const Problem& p, const ForwardArgs& a);

}  // namespace flashproof
