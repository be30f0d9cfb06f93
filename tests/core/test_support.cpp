// The declared support (core/support.h): what it accepts, why it refuses, and that fitting moves a
// drawn problem inside it without touching the dtype or leaving the valid domain.
#include <gtest/gtest.h>

#include "core/rng.h"
#include "core/support.h"

namespace flashproof {
namespace {

Problem problem(std::int64_t sq, std::int64_t sk, std::int64_t d = 64) {
  Problem p;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.head_dim = d;
  return p;
}

// A kernel with typical limits: no windows, no GQA, top-left causal, lengths above 128
// multiples of 128, fp16 only, head dims 64 and 128.
Support first_hour_kernel() {
  Support s;
  s.dtypes = {DType::fp16};
  s.head_dims = {64, 128};
  s.windows = false;
  s.alignment = MaskAlignment::top_left;
  s.gqa = false;
  s.seqlen_multiple = 128;
  s.seqlen_free_up_to = 128;
  return s;
}

TEST(Support, EverythingByDefault) {
  Problem p = problem(300, 7, 256);
  p.heads_q = 4, p.heads_kv = 2, p.window_left = 3, p.window_right = 5, p.dtype = DType::fp32;
  EXPECT_EQ(unsupported_by(Support{}, p, true), "");
  EXPECT_FALSE(fit_to_support(p, Support{}));
  EXPECT_EQ(describe(Support{}), "every dense problem");
  Support all;
  all.packed = all.softcap = all.alibi = true;
  EXPECT_EQ(describe(all), "packed batches; soft cap; ALiBi");
  all.kv_cache = all.paged = true;
  EXPECT_EQ(describe(all), "packed batches; soft cap; ALiBi; KV caches, paged");
  all.kv_append = true;
  EXPECT_EQ(describe(all), "everything");
  Support appending;
  appending.kv_append = true;
  EXPECT_EQ(validate(appending), "appended keys (kv_append) need kv_cache declared too");
}

// A KV cache is run only where declared, paged ones only where pages are, and never backward.
TEST(Support, KvCachesOnlyWhereDeclared) {
  Problem p = problem(2, 64, 64);
  p.cache_seqlens = {10};
  Support s;
  EXPECT_EQ(unsupported_by(s, p, false), "KV caches (cache_seqlens, page_size) are not declared");
  s.kv_cache = true;
  EXPECT_EQ(unsupported_by(s, p, false), "");
  EXPECT_EQ(unsupported_by(s, p, true), "a KV-cache problem is forward only");
  p.page_size = 16, p.num_pages = 4, p.block_table = {3, 2, 1, 0};
  ASSERT_EQ(p.validate(), "");
  EXPECT_EQ(unsupported_by(s, p, false), "paged KV caches (page_size, block_table) are not declared");
  EXPECT_TRUE(fit_to_support(p, s));  // the same cache, contiguous
  EXPECT_EQ(p.cache_seqlens, std::vector<std::int64_t>{10});
  EXPECT_FALSE(p.paged());
  s.kv_cache = false, s.paged = true;
  EXPECT_EQ(validate(s), "paged KV caches need kv_cache declared too");
}

// The soft cap and ALiBi are never handed to an implementation that does not declare them: named
// when unsupported, dropped when fitted (the slopes follow the heads when GQA is folded).
TEST(Support, SoftcapAndAlibiOnlyWhereDeclared) {
  Problem p = problem(64, 64, 64);
  p.heads_q = 4, p.heads_kv = 2;
  p.softcap = 20.0f;
  p.alibi_slopes = standard_alibi_slopes(4);
  Support s;
  EXPECT_EQ(unsupported_by(s, p, false), "the soft cap is not declared");
  s.softcap = true;
  EXPECT_EQ(unsupported_by(s, p, false), "ALiBi is not declared");
  s.alibi = true;
  EXPECT_EQ(unsupported_by(s, p, true), "");
  EXPECT_EQ(describe(s), "soft cap; ALiBi");
  Problem fitted = p;
  EXPECT_TRUE(fit_to_support(fitted, Support{}));
  EXPECT_FALSE(fitted.softcap.has_value());
  EXPECT_TRUE(fitted.alibi_slopes.empty());
  fitted = p;
  s.gqa = false;
  EXPECT_TRUE(fit_to_support(fitted, s));
  EXPECT_EQ(fitted.heads_q, 2);
  EXPECT_EQ(fitted.alibi_slopes, (std::vector<float>{0.25f, 0.0625f}));
  EXPECT_EQ(fitted.validate(), "");
}

TEST(Support, NamesTheFirstConstraintBroken) {
  const Support s = first_hour_kernel();
  EXPECT_EQ(unsupported_by(s, problem(128, 128), true), "");
  EXPECT_EQ(unsupported_by(s, problem(100, 256), false), "");
  EXPECT_EQ(unsupported_by(s, problem(130, 128), false), "seqlen_q 130 is not a multiple of 128 (declared above 128)");
  EXPECT_EQ(unsupported_by(s, problem(128, 200), false), "seqlen_k 200 is not a multiple of 128 (declared above 128)");
  EXPECT_EQ(unsupported_by(s, problem(128, 128, 96), false), "head dim 96 is not declared");
  Problem p = problem(64, 64);
  p.dtype = DType::bf16;
  EXPECT_EQ(unsupported_by(s, p, false), "dtype bf16 is not declared");
  p = problem(64, 64);
  p.heads_q = 2;
  EXPECT_EQ(unsupported_by(s, p, false), "GQA (heads_q != heads_kv) is not declared");
  p = problem(64, 64);
  p.window_left = 8, p.window_right = 0;
  EXPECT_EQ(unsupported_by(s, p, false), "a local window is not declared");
  p = problem(32, 64);
  p.window_right = 0;  // causal, bottom-right: a top-left kernel computes another mask here
  EXPECT_NE(unsupported_by(s, p, false).find("top-left"), std::string::npos);
  p.seqlen_q = 64;
  EXPECT_EQ(unsupported_by(s, p, false), "");
  Support forward_only;
  forward_only.backward = false;
  EXPECT_EQ(unsupported_by(forward_only, p, false), "");
  EXPECT_EQ(unsupported_by(forward_only, p, true), "the backward is not declared");
  Support short_keys;
  short_keys.max_seqlen_k = 64;
  EXPECT_EQ(unsupported_by(short_keys, problem(1, 65), false), "seqlen_k 65 is above the declared maximum 64");
}

TEST(Support, FitsShapesButNeverTheDtype) {
  const Support s = first_hour_kernel();
  Problem p = problem(300, 200, 100);
  p.heads_q = 4, p.heads_kv = 2, p.window_left = 16, p.window_right = 0;
  ASSERT_TRUE(fit_to_support(p, s));
  EXPECT_EQ(unsupported_by(s, p, true), "");
  EXPECT_EQ(p.head_dim, 128);  // the nearest declared
  EXPECT_EQ(p.heads_q, 2);
  EXPECT_TRUE(p.causal());  // the window became the nearest declared kind
  EXPECT_EQ(p.seqlen_q, 128);  // 256 and 128 rounded down, then equal for the top-left mask
  EXPECT_EQ(p.seqlen_k, 128);
  Problem bf = problem(64, 64);
  bf.dtype = DType::bf16;
  EXPECT_FALSE(fit_to_support(bf, s));
  EXPECT_EQ(bf.dtype, DType::bf16);
  Support multiple;
  multiple.seqlen_multiple = 64;  // from length 1 on: 50 cannot round down, so up
  Problem small = problem(50, 10);
  ASSERT_TRUE(fit_to_support(small, multiple));
  EXPECT_EQ(small.seqlen_q, 64);
  EXPECT_EQ(small.seqlen_k, 64);
}

// Every drawn shape of a few thousand lands inside the support after fitting, valid, with its dtype
// kept: the generators rely on it to never drop a case.
TEST(Support, EveryDrawnShapeFits) {
  const Support s = first_hour_kernel();
  Rng rng(7);
  for (int i = 0; i < 4000; ++i) {
    Problem p;
    p.heads_kv = 1 + static_cast<std::int64_t>(rng.next() % 3);
    p.heads_q = p.heads_kv * (1 + static_cast<std::int64_t>(rng.next() % 3));
    p.seqlen_q = 1 + static_cast<std::int64_t>(rng.next() % 700);
    p.seqlen_k = 1 + static_cast<std::int64_t>(rng.next() % 700);
    p.head_dim = 1 + static_cast<std::int64_t>(rng.next() % 256);
    const int mask = static_cast<int>(rng.next() % 3);
    p.window_left = mask == 2 ? static_cast<std::int64_t>(rng.next() % 50) : -1;
    p.window_right = mask == 0 ? -1 : 0;
    ASSERT_EQ(p.validate(), "");
    fit_to_support(p, s);
    ASSERT_EQ(p.validate(), "") << p.describe();
    ASSERT_EQ(unsupported_by(s, p, true), "") << p.describe();
    ASSERT_EQ(p.dtype, DType::fp16);
  }
}

TEST(Support, UnusableDeclarationsAreRefused) {
  Support s;
  EXPECT_EQ(validate(s), "");
  s.seqlen_multiple = 0;
  EXPECT_EQ(validate(s), "seqlen_multiple must be at least 1");
  s = Support{};
  s.unmasked = s.causal = s.windows = false;
  EXPECT_EQ(validate(s), "no mask kind is declared (none, causal, window)");
  s = Support{};
  s.head_dims = {512};
  EXPECT_EQ(validate(s), "declared head dim 512 is outside [1, 256]");
}

}  // namespace
}  // namespace flashproof
