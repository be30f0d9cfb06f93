// KV-cache problems (docs/spec.md "KV caches"): their validation, their logical packed problem and
// the moves between the cache's layout and the logical one.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>

#include "core/generators.h"
#include "core/kv_cache.h"
#include "core/problem.h"

namespace flashproof {
namespace {

Problem paged() {
  Problem p;
  p.batch = 3, p.heads_q = 4, p.heads_kv = 2, p.seqlen_q = 2, p.seqlen_k = 64, p.head_dim = 16;
  p.cache_seqlens = {5, 0, 40};
  p.page_size = 16, p.num_pages = 9;
  p.block_table = page_table(3, 4, 9, 7);
  return p;
}

TEST(KvCache, ValidationNamesTheFirstBrokenRule) {
  EXPECT_EQ(paged().validate(), "");
  Problem p = paged();
  p.cache_seqlens = {5, 0};
  EXPECT_EQ(p.validate(), "cache_seqlens must hold one length per sequence of the batch (3), not 2");
  p = paged(), p.cache_seqlens[2] = 65;
  EXPECT_EQ(p.validate(), "cache_seqlens[2] (65) must be in [0, seqlen_k] (the cache's capacity, 64)");
  p = paged(), p.cache_seqlens[0] = -1;
  EXPECT_NE(p.validate().find("cache_seqlens[0] (-1)"), std::string::npos);
  p = paged(), p.block_table[5] = 9;
  EXPECT_EQ(p.validate(), "block_table entry 5 (sequence 1, page 1) is 9, past the page pool [0, 9)");
  p = paged(), p.block_table[0] = -1;
  EXPECT_NE(p.validate().find("past the page pool"), std::string::npos);
  p = paged(), p.block_table.pop_back();
  EXPECT_EQ(p.validate(), "block_table must hold batch x seqlen_k / page_size = 12 entries, not 11");
  p = paged(), p.page_size = 24;
  EXPECT_EQ(p.validate(), "page_size (24) must be a multiple of 16 up to 256");
  p = paged(), p.page_size = 272;
  EXPECT_NE(p.validate().find("up to 256"), std::string::npos);
  p = paged(), p.page_size = 48, p.block_table.resize(3);
  EXPECT_EQ(p.validate(), "seqlen_k (64, the block table's capacity) must be a multiple of page_size (48)");
  p = paged(), p.num_splits = 129;
  EXPECT_EQ(p.validate(), "num_splits (129) must be in [0, 128] (0: the implementation's choice)");
  p = paged(), p.cu_seqlens_q = {0, 6}, p.cu_seqlens_k = {0, 64}, p.batch = 1, p.seqlen_q = 6;
  EXPECT_NE(p.validate().find("cannot be combined"), std::string::npos);
  Problem dense;
  dense.num_splits = 2;
  EXPECT_EQ(dense.validate(), "num_splits is for KV-cache problems (cache_seqlens or page_size)");
  dense.num_splits = 0, dense.num_pages = 3;
  EXPECT_EQ(dense.validate(), "num_pages and block_table need a page_size (a paged KV cache)");
  // The pool's size is bounded like K's, by division.
  p = paged(), p.num_pages = std::int64_t{1} << 40;
  EXPECT_EQ(p.validate(), "the page pool would have more than 2^34 elements");
}

TEST(KvCache, TheLogicalProblemPacksEachSequencesUsedKeys) {
  const Problem l = logical_problem(paged());
  EXPECT_EQ(l.validate(), "");
  EXPECT_EQ(l.batch, 1);
  EXPECT_EQ(l.seqlen_q, 6);
  EXPECT_EQ(l.cu_seqlens_q, (std::vector<std::int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(l.cu_seqlens_k, (std::vector<std::int64_t>{0, 5, 5, 45}));
  EXPECT_EQ(l.seqlen_k, 45);
  EXPECT_FALSE(l.kv_cache());
  // No key anywhere: one more sequence of no rows keeps seqlen_k >= 1.
  Problem empty = paged();
  empty.cache_seqlens = {0, 0, 0};
  const Problem e = logical_problem(empty);
  EXPECT_EQ(e.validate(), "");
  EXPECT_EQ(e.cu_seqlens_q, (std::vector<std::int64_t>{0, 2, 4, 6, 6}));
  EXPECT_EQ(e.cu_seqlens_k, (std::vector<std::int64_t>{0, 0, 0, 0, 1}));
}

std::uint32_t key_bits(const HostTensor& t, CacheSlot s, std::int64_t h, std::int64_t x) {
  return t.bits(s.first, s.second, h, x);
}

// Every used slot holds its logical key, every other slot of the pool is NaN, and reading the cache
// back gives the logical keys: through a shuffled table with pages shared between sequences.
TEST(KvCache, TheCacheHoldsTheLogicalKeysAndNaNElsewhere) {
  Problem p = paged();
  p.num_pages = 5;  // 12 entries over 5 pages: shared
  p.block_table = page_table(3, 4, 5, 11);
  p.cache_seqlens = {20, 3, 33};
  const Inputs in = generate_inputs(p, Distribution{}, 4);
  ASSERT_NE(in.cache, nullptr);
  const KvCacheInputs& c = *in.cache;
  EXPECT_EQ(c.k.shape(), (Shape{5, 16, 2, 16}));
  std::vector<int> used(5 * 16, 0);
  std::int64_t row = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t j = 0; j < p.used_keys(b); ++j, ++row) {
      const CacheSlot s = cache_slot(p, b, j);
      used[static_cast<std::size_t>(s.first * 16 + s.second)] = 1;
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t x = 0; x < 16; ++x) {
          ASSERT_EQ(in.k.bits(0, row, h, x), key_bits(c.k, s, h, x)) << b << " " << j;
          ASSERT_EQ(in.v.bits(0, row, h, x), key_bits(c.v, s, h, x));
        }
    }
  for (std::int64_t pg = 0; pg < 5; ++pg)
    for (std::int64_t slot = 0; slot < 16; ++slot)
      if (!used[static_cast<std::size_t>(pg * 16 + slot)]) {
        EXPECT_TRUE(std::isnan(c.k.get(pg, slot, 1, 3)));
        EXPECT_TRUE(std::isnan(c.v.get(pg, slot, 0, 0)));
      }
  // Twin: a slot taken from the allocated position (page j / page_size of the pool, not of the
  // table) does not hold the logical key.
  int differ = 0;
  for (std::int64_t j = 0; j < 20; ++j)
    differ += in.k.bits(0, j, 0, 0) != c.k.bits(j / 16, j % 16, 0, 0);
  EXPECT_GT(differ, 0);
}

TEST(KvCache, RowsAndLseMoveBetweenTheLayouts) {
  const Problem p = paged();
  HostTensor logical(DType::fp16, logical_problem(p).q_shape());
  for (std::int64_t i = 0; i < 6; ++i) logical.set(0, i, 3, 15, static_cast<double>(i));
  const HostTensor rows = cache_rows_view(p, logical);
  EXPECT_EQ(rows.shape(), (Shape{3, 2, 4, 16}));
  EXPECT_EQ(rows.get(2, 1, 3, 15), 5.0);
  EXPECT_EQ(logical_rows_view(rows).get(0, 5, 3, 15), 5.0);
  HostTensor lse(DType::fp32, p.lse_shape(), 3);
  lse.set(2, 3, 1, 0, 7.5);
  const HostTensor l = logical_lse(p, lse);
  EXPECT_EQ(l.get(0, 3, 5, 0), 7.5);
  HostTensor back(DType::fp32, p.lse_shape(), 3);
  write_cache_lse(p, l, back);
  EXPECT_EQ(back.get(2, 3, 1, 0), 7.5);
}

TEST(KvCache, PageTablesInOrderOrShuffled) {
  EXPECT_EQ(page_table(2, 3, 6, 0), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(page_table(2, 3, 4, 0), (std::vector<std::int64_t>{0, 1, 2, 3, 0, 1}));
  std::vector<std::int64_t> s = page_table(1, 8, 8, 5);
  EXPECT_NE(s, page_table(1, 8, 8, 0));
  std::sort(s.begin(), s.end());
  EXPECT_EQ(s, page_table(1, 8, 8, 0));  // a permutation of the pool
}

// Appended keys (Problem::seqlen_new): attended after the stored ones, checked one line each.
Problem appending() {
  Problem p = paged();
  p.num_pages = 13;  // one spare page: nothing shared
  p.block_table = page_table(3, 4, 13, 5);
  p.seqlen_new = 3;
  return p;
}

TEST(KvCache, AppendedKeysAreValidatedOneLineEach) {
  EXPECT_EQ(appending().validate(), "");
  EXPECT_EQ(appending().used_keys(2), 43);
  EXPECT_EQ(appending().stored_keys(2), 40);
  Problem p = appending();
  p.cache_seqlens[2] = 62;
  EXPECT_EQ(p.validate(), "cache_seqlens[2] + seqlen_new (62 + 3) exceeds the cache's capacity seqlen_k (64)");
  p = appending(), p.seqlen_new = -1;
  EXPECT_EQ(p.validate(), "seqlen_new (-1) must be >= 0");
  p = appending(), p.cache_seqlens.clear();
  EXPECT_EQ(p.validate(), "seqlen_new (appended keys) needs cache_seqlens (where each sequence's keys end)");
  Problem dense;
  dense.seqlen_new = 1;
  EXPECT_EQ(dense.validate(), "seqlen_new (appended keys) is for KV-cache problems with cache_seqlens");
  // A page receiving appended keys that another used entry maps: refused. Sequence 0 appends into
  // its page 0 (slots 5..7); sequence 2's page 1 made the same page.
  p = appending(), p.block_table[2 * 4 + 1] = p.block_table[0];
  EXPECT_EQ(p.validate(), "block_table: page " + std::to_string(p.block_table[0]) +
                              " receives sequence 0's appended keys but another used entry maps it too (pages that "
                              "receive appended keys cannot be shared)");
  // Sharing a page nobody appends into stays allowed: sequence 2's page 0 (keys 0..15, stored) as
  // sequence 1's page 2 (past its used length: unused).
  p = appending(), p.block_table[1 * 4 + 2] = p.block_table[2 * 4 + 0];
  EXPECT_EQ(p.validate(), "");
}

TEST(KvCache, AppendedKeysArriveApartAndTheirSlotsStayUnusedUntilWritten) {
  const Problem p = appending();
  const Inputs in = generate_inputs(p, Distribution{}, 6);
  const KvCacheInputs& c = *in.cache;
  ASSERT_EQ(c.k_new.shape(), (Shape{3, 3, 2, 16}));
  std::int64_t row = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t j = 0; j < p.used_keys(b); ++j, ++row) {
      const CacheSlot s = cache_slot(p, b, j);
      const std::int64_t t = j - p.stored_keys(b);
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t x = 0; x < 16; ++x) {
          if (t < 0) {
            ASSERT_EQ(in.k.bits(0, row, h, x), key_bits(c.k, s, h, x));
          } else {  // the logical key is the appended one; its slot is NaN until the call writes it
            ASSERT_EQ(in.k.bits(0, row, h, x), c.k_new.bits(b, t, h, x));
            ASSERT_EQ(in.v.bits(0, row, h, x), c.v_new.bits(b, t, h, x));
            ASSERT_TRUE(std::isnan(c.k.get(s.first, s.second, h, x)));
          }
        }
    }
  HostTensor k = c.k.contiguous_copy(), v = c.v.contiguous_copy();
  append_to_cache(p, c.k_new, c.v_new, k, v);
  EXPECT_EQ(cache_difference("K cache", k, k), "");
  EXPECT_NE(cache_difference("K cache", c.k, k), "");  // before the append it differs
  const CacheSlot last = cache_slot(p, 2, 42);
  // The twin: the keys appended one slot late leave the first appended slot NaN.
  Problem late = p;
  for (std::int64_t& n : late.cache_seqlens) n += 1;
  HostTensor k_late = c.k.contiguous_copy(), v_late = c.v.contiguous_copy();
  append_to_cache(late, c.k_new, c.v_new, k_late, v_late);
  const std::string diff = cache_difference("K cache", k_late, k);
  EXPECT_EQ(diff.rfind("K cache[", 0), 0u) << diff;
  EXPECT_NE(k.bits(last.first, last.second, 0, 0), c.k.bits(last.first, last.second, 0, 0));
}

}  // namespace
}  // namespace flashproof
