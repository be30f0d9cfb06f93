// KV-cache checks (docs/spec.md "KV caches"): the implementation under test gets the cache (paged or
// not, NaN in every unused slot), the reference and the bounds its logical packed problem; a
// baseline that reads the cache right passes, each cache flaw fails.
#include <gtest/gtest.h>

#include <memory>

#include "core/kv_cache.h"
#include "harness/check.h"
#include "harness/check_render.h"
#include "harness/records.h"
#include "kernels/naive/naive_attention.h"

namespace flashproof {
namespace {

Case cache_case(bool paged, std::uint64_t shuffle, std::vector<std::int64_t> lengths) {
  Case c;
  Problem& p = c.problem;
  p.batch = static_cast<std::int64_t>(lengths.size());
  p.heads_q = 4, p.heads_kv = 2, p.seqlen_q = 3, p.seqlen_k = 64, p.head_dim = 32;
  p.window_right = 0;  // causal, aligned to each sequence's used length
  p.cache_seqlens = std::move(lengths);
  if (paged) {
    p.page_size = 16;
    p.num_pages = p.batch * 4 - 1;  // shared pages where the table wraps
    p.block_table = page_table(p.batch, 4, p.num_pages, shuffle);
  }
  c.seed = 3;
  return c;
}

CheckRecord check_with(NaiveFlaw flaw, const Case& c) {
  const std::unique_ptr<AttentionImpl> impl = make_naive_attention(flaw);
  return run_check(c, *impl);
}

TEST(KvCacheCheck, TheBaselineReadingTheCachePasses) {
  for (const Case& c : {cache_case(false, 0, {5, 0, 17, 64}), cache_case(true, 0, {5, 0, 17, 64}),
                        cache_case(true, 9, {1, 16, 33, 2}), cache_case(true, 4, {0, 0, 0, 0})}) {
    const CheckRecord r = check_with(NaiveFlaw::none, c);
    EXPECT_EQ(r.verdict, Verdict::pass) << c.problem.describe() << "\n" << to_table(r);
    EXPECT_EQ(r.c.problem, c.problem);  // the record names the cache problem, not its logical one
  }
}

// The split count asked for does not change the attention.
TEST(KvCacheCheck, ASplitCountIsARequestNotAnotherProblem) {
  Case c = cache_case(true, 2, {30, 7});
  c.problem.num_splits = 3;
  EXPECT_EQ(check_with(NaiveFlaw::none, c).verdict, Verdict::pass);
}

TEST(KvCacheCheck, ReadingTheCacheToItsCapacityFails) {
  for (const Case& c : {cache_case(false, 0, {5, 0, 17, 64}), cache_case(true, 9, {1, 16, 33, 2})}) {
    const CheckRecord r = check_with(NaiveFlaw::cache_allocated_length, c);
    EXPECT_EQ(r.verdict, Verdict::fail) << to_table(r);
  }
}

TEST(KvCacheCheck, RowsOfLaterSequencesNeverWrittenFail) {
  const CheckRecord r = check_with(NaiveFlaw::later_sequences_unwritten, cache_case(true, 9, {1, 16, 33, 2}));
  EXPECT_EQ(r.verdict, Verdict::fail) << to_table(r);
}

TEST(KvCacheCheck, AKvCacheIsForwardOnly) {
  Case c = cache_case(false, 0, {5, 6});
  c.backward = true;
  EXPECT_THROW(run_check(c), std::invalid_argument);
}

// An implementation that does not declare caches is not run on one.
TEST(KvCacheCheck, AnUndeclaredCacheIsRefused) {
  struct NoCache final : AttentionImpl {
    std::unique_ptr<AttentionImpl> base = make_naive_attention();
    std::string name() const override { return "no-cache"; }
    std::string description() const override { return "naive without caches"; }
    std::string where() const override { return "host"; }
    Support declared_support() const override { return {}; }
    std::string unsupported_reason(const Problem&, bool) const override { return {}; }
    void forward(const Problem& p, const ForwardArgs& a) override { base->forward(p, a); }
    void backward(const Problem& p, const BackwardArgs& a) override { base->backward(p, a); }
  } impl;
  try {
    run_check(cache_case(true, 0, {5, 6}), impl);
    FAIL() << "ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("KV caches (cache_seqlens, page_size) are not declared"), std::string::npos)
        << e.what();
  }
  Problem fitted = cache_case(true, 0, {5, 6}).problem;
  EXPECT_TRUE(fit_to_support(fitted, Support{}));
  EXPECT_FALSE(fitted.kv_cache());
  EXPECT_EQ(fitted.validate(), "");
}

TEST(KvCacheCheck, TheProblemsRecordCarriesTheCache) {
  Case c = cache_case(true, 5, {3, 40});
  c.problem.num_splits = 2;
  const json::Value j = c;
  EXPECT_EQ(j.at("cache_seqlens"), json::Value::array({3, 40}));
  EXPECT_EQ(j.at("page_size"), 16);
  Case back = j.get<Case>();
  EXPECT_EQ(back.problem, c.problem);
  // A dense problem's record has none of the fields.
  const json::Value dense = Case{};
  EXPECT_FALSE(dense.contains("cache_seqlens"));
  EXPECT_FALSE(dense.contains("num_splits"));
}

// Appended keys (Problem::seqlen_new): the implementation writes them into the cache, then attends
// over them; the check judges O and LSE against the logical keys and compares the cache it leaves.
Case appending_case(bool paged) {
  Case c = cache_case(paged, 6, {5, 0, 17, 60});
  c.problem.seqlen_new = 3;
  if (paged) {  // pages receiving appended keys unshared
    c.problem.num_pages = 16;
    c.problem.block_table = page_table(4, 4, 16, 6);
  }
  return c;
}

TEST(KvCacheCheck, AppendedKeysWrittenAndAttendedPass) {
  for (bool paged : {false, true}) {
    const Case c = appending_case(paged);
    const CheckRecord r = check_with(NaiveFlaw::none, c);
    EXPECT_EQ(r.verdict, Verdict::pass) << c.problem.describe() << "\n" << to_table(r);
    EXPECT_EQ(r.tensors.size(), 2u);  // O and LSE: no cache difference
    const json::Value j = c;
    EXPECT_EQ(j.at("seqlen_new"), 3);
    EXPECT_EQ(j.get<Case>().problem, c.problem);
  }
}

// The twins: appended at the capacity's end (the cache's allocated length), and attended over
// without being stored (O right, the cache left as it was).
TEST(KvCacheCheck, AppendedKeysMisplacedOrNeverStoredFail) {
  for (bool paged : {false, true}) {
    const CheckRecord r = check_with(NaiveFlaw::cache_allocated_length, appending_case(paged));
    EXPECT_EQ(r.verdict, Verdict::fail) << to_table(r);
  }
  struct NeverStored final : AttentionImpl {
    std::unique_ptr<AttentionImpl> base = make_naive_attention();
    std::string name() const override { return "never-stored"; }
    std::string description() const override { return "appends into a copy of the cache"; }
    std::string where() const override { return "host"; }
    Support declared_support() const override { return base->declared_support(); }
    std::string unsupported_reason(const Problem&, bool) const override { return {}; }
    void forward(const Problem& p, const ForwardArgs& a) override {
      HostTensor k = a.k.contiguous_copy(), v = a.v.contiguous_copy();
      const KvAppend copy{a.append->k_new, a.append->v_new, k, v};
      base->forward(p, ForwardArgs{a.q, k, v, a.o, a.lse, a.wanted, &copy});
    }
    void backward(const Problem& p, const BackwardArgs& a) override { base->backward(p, a); }
  } impl;
  const CheckRecord r = run_check(appending_case(true), impl);
  EXPECT_EQ(r.verdict, Verdict::fail);
  ASSERT_EQ(r.tensors.size(), 3u);
  EXPECT_EQ(r.tensors[0].verdict, Verdict::pass);  // O: the attention itself is right
  EXPECT_EQ(r.tensors[2].name, "KV cache");
  ASSERT_EQ(r.tensors[2].reasons.size(), 1u);
  EXPECT_EQ(r.tensors[2].reasons[0].rfind("the cache after the call is not the cache with the appended keys: K cache[", 0), 0u)
      << r.tensors[2].reasons[0];
}

// Not declared: fitted away into stored keys (the same attention), refused when run as is.
TEST(KvCacheCheck, UndeclaredAppendsAreFoldedIntoTheStoredKeys) {
  Support s;
  s.kv_cache = s.paged = true;
  Problem p = appending_case(true).problem;
  EXPECT_EQ(unsupported_by(s, p, false), "appended keys (seqlen_new) are not declared");
  ASSERT_TRUE(fit_to_support(p, s));
  EXPECT_EQ(p.seqlen_new, 0);
  EXPECT_EQ(p.cache_seqlens, (std::vector<std::int64_t>{8, 3, 20, 63}));
  EXPECT_EQ(unsupported_by(s, p, false), "");
}

}  // namespace
}  // namespace flashproof
