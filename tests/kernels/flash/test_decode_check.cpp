// FA2's decode path through the harness (label `emulated`): the certified check (run_check: the
// reference on the logical sequences, the bounds with split-KV's terms, docs/error-bounds.md (S1))
// passes fa2 on paged and contiguous KV caches with split counts forced and left to its heuristic,
// and fails each deliberately broken variant of the decode path (make_fa2_attention(false, flaw)).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/generators.h"
#include "core/kv_cache.h"
#include "harness/check.h"
#include "harness/check_render.h"
#include "kernels/fa2/fa2_attention.h"

namespace flashproof {
namespace {

using kernels::FlashDecodeFlaw;

Case cache_case(DType t, std::vector<std::int64_t> lengths, std::int64_t capacity, std::int64_t page, std::int64_t splits,
                std::int64_t heads_q, std::int64_t seqlen_q, const char* dist = "normal") {
  Case c;
  Problem& p = c.problem;
  p.dtype = t, p.batch = static_cast<std::int64_t>(lengths.size()), p.heads_q = heads_q, p.heads_kv = 2;
  p.seqlen_q = seqlen_q, p.seqlen_k = capacity, p.head_dim = 64, p.window_right = 0;
  p.cache_seqlens = std::move(lengths);
  p.num_splits = splits;
  if (page > 0) {
    p.page_size = page;
    p.num_pages = p.batch * (capacity / page) - 1;  // the table wraps: one page shared
    p.block_table = page_table(p.batch, capacity / page, p.num_pages, 5);
  }
  c.dist = *parse_distribution(dist);
  c.seed = 11;
  return c;
}

std::vector<Case> cases() {
  return {
      cache_case(DType::fp16, {130, 0, 1, 257}, 320, 16, 0, 8, 1),          // heuristic splits, an empty cache
      cache_case(DType::bf16, {200, 64, 65}, 256, 0, 3, 4, 3),              // contiguous, 3 splits
      cache_case(DType::fp16, {300, 33}, 512, 256, 5, 2, 2, "large-logits:3000"),  // pages of 256, large logits
      cache_case(DType::bf16, {191, 2, 128, 129}, 192, 48, 4, 4, 4),          // pages of 48 (not a power of 2)
  };
}

// Appended keys (fa2_append_kernel, then the decode over the lengths after the append): new tokens
// crossing a page edge, one into an empty cache, heuristic and forced splits.
std::vector<Case> appending_cases() {
  std::vector<Case> v = {cache_case(DType::fp16, {30, 0, 1, 200}, 256, 16, 0, 8, 1),
                         cache_case(DType::bf16, {62, 127}, 192, 0, 3, 4, 3),
                         cache_case(DType::fp16, {14, 250}, 512, 256, 4, 2, 4)};
  const std::int64_t appended[] = {5, 3, 4};
  for (std::size_t x = 0; x < v.size(); ++x) {
    Problem& p = v[x].problem;
    p.seqlen_new = appended[x];
    if (p.paged()) {  // pages receiving appended keys unshared
      p.num_pages = p.batch * p.pages_per_sequence();
      p.block_table = page_table(p.batch, p.pages_per_sequence(), p.num_pages, 9);
    }
  }
  return v;
}

TEST(DecodeCheck, Fa2AppendsTheNewKeysAndPassesTheCertifiedCheck) {
  const std::unique_ptr<AttentionImpl> fa2 = make_fa2_attention(false);
  for (const Case& c : appending_cases()) {
    const CheckRecord r = run_check(c, *fa2);
    EXPECT_EQ(r.verdict, Verdict::pass) << c.problem.describe() << "\n" << to_table(r);
    EXPECT_EQ(r.tensors.size(), 2u) << to_table(r);  // the cache left as appended
  }
}

// The twin: the keys written, the key range (and the split heuristic) from the lengths before.
TEST(DecodeCheck, AttendingOverTheLengthsBeforeTheAppendFails) {
  const std::unique_ptr<AttentionImpl> broken = make_fa2_attention(false, FlashDecodeFlaw::keys_before_append);
  for (const Case& c : appending_cases()) {
    const CheckRecord r = run_check(c, *broken);
    EXPECT_EQ(r.verdict, Verdict::fail) << c.problem.describe();
    EXPECT_EQ(r.tensors.size(), 2u);  // the cache is right; O is not
  }
}

TEST(DecodeCheck, Fa2PassesTheCertifiedCheck) {
  const std::unique_ptr<AttentionImpl> fa2 = make_fa2_attention(false);
  for (const Case& c : cases()) {
    const CheckRecord r = run_check(c, *fa2);
    EXPECT_EQ(r.verdict, Verdict::pass) << c.problem.describe() << "\n" << to_table(r);
  }
}

// Each broken variant fails the check on some case; a split-count flaw needs more than one split.
TEST(DecodeCheck, EachBrokenDecodeVariantFails) {
  for (FlashDecodeFlaw flaw : {FlashDecodeFlaw::split_skips_last_block, FlashDecodeFlaw::combine_without_empty_guard,
                               FlashDecodeFlaw::page_from_allocated_length, FlashDecodeFlaw::later_sequences_unwritten}) {
    const std::unique_ptr<AttentionImpl> broken = make_fa2_attention(false, flaw);
    int failed = 0;
    for (const Case& c : cases()) failed += run_check(c, *broken).verdict == Verdict::fail;
    EXPECT_GT(failed, 0) << broken->name();
  }
}

}  // namespace
}  // namespace flashproof
