// A KV-cache problem's keys and values as an implementation receives them (docs/spec.md "KV
// caches"), and the moves between that layout and its logical packed problem's (logical_problem,
// core/problem.h), which the reference, the bounds and the baselines judge and compute.
#pragma once

#include <cstdint>
#include <vector>

#include "core/attention_impl.h"
#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof {

struct KvCacheInputs {
  Problem problem;  // the KV-cache problem the implementation is given
  HostTensor k, v;  // problem.kv_shape(): the contiguous cache, or the page pool
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
// heads_kv, head_dim], logical_problem(p)'s): every used slot written, every other slot NaN. Where
// pages are shared the later sequence's keys are those the page holds (the generators give shared
// pages equal contents).
KvCacheInputs cache_inputs(const ValidProblem& p, const HostTensor& k, const HostTensor& v);

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
