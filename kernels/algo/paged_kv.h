// Where a KV cache keeps a sequence's logical key (docs/fa2.md "Decoding"; docs/spec.md "KV caches"):
// sequence b's key j lies at row (b, j) of a contiguous cache [batch, seqlen_k, heads_kv, d], or, in a
// paged cache, in the pool [num_pages, page_size, heads_kv, d] at page block_table[b *
// pages_per_sequence + j / page_size], slot j % page_size. Either way the storage row is a pair
// (outer index, row) that a SeqTensor's at() takes as (batch, row). Callers ask only for keys j below
// the sequence's capacity (pages_per_sequence * page_size), and the decode kernels only below its
// used length: the table entry is read, never a slot past it.
//
// Templated on the integer and the table (a pointer in the kernels) so that the paged arithmetic is
// also instantiated with Z3's integers: proofs/paged_kv_proofs.cpp proves it free of int32 overflow,
// and every table index inside the table, at the limits the API accepts (theorem 10).
#pragma once

#include "core/host_device.h"
#include "kernels/algo/domain.h"

namespace flashproof::algo {

template <class Int>
struct CacheRow {
  Int outer;  // the batch index (contiguous) or the page (paged)
  Int row;    // the key (contiguous) or the slot in its page (paged)
};

// A paged cache's (page_size > 0) row of sequence b's key j.
template <class Int, class Table>
FP_HOST_DEVICE CacheRow<Int> paged_cache_row(Int b, Int j, Int page_size, Int pages_per_sequence, const Table& block_table) {
  const Int page = j / page_size;
  return {static_cast<Int>(block_table[b * pages_per_sequence + page]), j - page * page_size};
}

// page_size 0: a contiguous cache (the table is not read).
template <class Int, class Table>
FP_HOST_DEVICE CacheRow<Int> cache_row(Int b, Int j, Int page_size, Int pages_per_sequence, const Table& block_table) {
  if (page_size == 0) return {b, j};
  return paged_cache_row(b, j, page_size, pages_per_sequence, block_table);
}

// A walk over a sequence's keys j, j + step, j + 2 step, ... (step <= page_size when paged) that
// divides once, at the start, and then steps the slot and wraps it into the next page (at most one
// wrap per step): the decode kernels' tile copies, where each thread visits its rows in this
// order. The table is read only by at(), which a copy calls only for rows it loads.
template <class Int, class Entry, class Table = const Entry*>
struct CacheWalk {
  Int b, key_or_slot, page, page_size, pages_per_sequence;
  Table block_table;

  FP_HOST_DEVICE static CacheWalk start(Int b, Int j, Int page_size, Int pages_per_sequence, Table block_table) {
    if (page_size == 0) return {b, j, Domain<Int>::lit(0, j), page_size, pages_per_sequence, block_table};
    return start_paged(b, j, page_size, pages_per_sequence, block_table);
  }
  FP_HOST_DEVICE static CacheWalk start_paged(Int b, Int j, Int page_size, Int pages_per_sequence, Table block_table) {
    const Int page = j / page_size;
    return {b, j - page * page_size, page, page_size, pages_per_sequence, block_table};
  }
  FP_HOST_DEVICE void advance(Int step) {
    key_or_slot = key_or_slot + step;
    const auto wraps = page_size != 0 && key_or_slot >= page_size;
    key_or_slot = Domain<Int>::select(wraps, key_or_slot - page_size, key_or_slot);
    page = Domain<Int>::select(wraps, page + 1, page);
  }
  // cache_row of the current key.
  FP_HOST_DEVICE CacheRow<Int> at() const {
    if (page_size == 0) return {b, key_or_slot};
    return paged_at();
  }
  FP_HOST_DEVICE CacheRow<Int> paged_at() const {
    return {static_cast<Int>(block_table[b * pages_per_sequence + page]), key_or_slot};
  }
};

// Split-count heuristic for a decode call whose other grid dimensions give `blocks` thread blocks
// (query blocks x batch x heads) and whose longest sequence has `key_blocks` key blocks, on a
// machine of `sms` multiprocessors (FlashAttention-2's num_splits_heuristic): 1 when the blocks
// already fill 80% of the machine; else the smallest count, up to min(sms, key_blocks, max_splits),
// whose wave efficiency (blocks * splits / sms over its ceiling) is within 85% of the best, counts
// that give the same blocks per split as a smaller one skipped.
inline int decode_split_heuristic(long long blocks, int key_blocks, int sms, int max_splits) {
  if (blocks >= sms * 8 / 10 || key_blocks <= 1) return 1;
  int limit = sms < key_blocks ? sms : key_blocks;
  limit = limit < max_splits ? limit : max_splits;
  const auto eligible = [&](int s) {
    return s == 1 || (key_blocks + s - 1) / s != (key_blocks + s - 2) / (s - 1);
  };
  const auto efficiency = [&](int s) {
    const double waves = static_cast<double>(blocks) * s / sms;
    const double whole = static_cast<double>(static_cast<long long>(waves + 0.999999999));
    return whole <= 0 ? 0.0 : waves / (whole < 1 ? 1 : whole);
  };
  double best = 0;
  for (int s = 1; s <= limit; ++s)
    if (eligible(s) && efficiency(s) > best) best = efficiency(s);
  for (int s = 1; s <= limit; ++s)
    if (eligible(s) && efficiency(s) >= 0.85 * best) return s;
  return 1;
}

}  // namespace flashproof::algo
