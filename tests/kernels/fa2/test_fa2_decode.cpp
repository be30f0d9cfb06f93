// The FA2 decode path on the host emulator (label `emulated`; docs/fa2.md "Decoding"): KV caches,
// contiguous and paged, split-KV and its combine, through the harness adapter (`fa2`), every output
// against a double computation of the logical attention within tolerances derived from the dtype
// (decode_cases.h), NaN in every unused slot and page and in O and LSE before the call. Then the
// split count's independence, each deliberately broken variant failing the same comparison, and the
// API's one-line errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/algo/paged_kv.h"
#include "kernels/fa2/api.h"
#include "kernels/fa2/fa2_attention.h"
#include "kernels/registry.h"
#include "tests/kernels/fa2/decode_cases.h"

namespace flashproof {
namespace {

using namespace decode_tests;

const bool kForceEmulator = [] { return setenv("FLASHPROOF_TARGET", "emulated", 1) == 0; }();

AttentionImpl& fa2() {
  AttentionImpl* impl = find_implementation("fa2");
  if (impl == nullptr) throw std::runtime_error("fa2 not registered");
  return *impl;
}

Comparison run_and_compare(AttentionImpl& impl, const DecodeCase& c) {
  const Problem p = problem_of(c);
  EXPECT_EQ(p.validate(), "") << c.label;
  EXPECT_EQ(impl.unsupported_reason(p, false), "") << c.label;
  const DecodeInputs in = decode_inputs(p, c.seed);
  return compare(p, run_decode(impl, p, in), reference(p, in));
}

class Fa2Decode : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(Fa2Decode, MatchesTheLogicalAttention) {
  const Comparison c = run_and_compare(fa2(), GetParam());
  EXPECT_EQ(c.bad, 0) << c.first << " (worst O error " << c.worst_o_ratio << " x tolerance)";
}

INSTANTIATE_TEST_SUITE_P(Cases, Fa2Decode, ::testing::ValuesIn(decode_cases()),
                         [](const auto& info) { return info.param.label; });

TEST(Fa2DecodeSplits, EveryCountGivesTheSameAttentionWithinTolerance) {
  // 4 key blocks in the longer sequence: 1..4 splits, 6 (two empty), and the heuristic.
  const Problem p = problem_of(sweep_case(1));
  const DecodeInputs in = decode_inputs(p, sweep_case(1).seed);
  const Reference r = reference(p, in);
  const Outputs one = run_decode(fa2(), p, in);
  for (std::int64_t splits : {1, 2, 3, 4, 6, 0}) {
    Problem q = p;
    q.num_splits = splits;
    const Outputs out = run_decode(fa2(), q, in);
    const Comparison c = compare(q, out, r);
    EXPECT_EQ(c.bad, 0) << "splits " << splits << ": " << c.first;
    double worst = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i)
        for (std::int64_t d = 0; d < p.head_dim; ++d)
          worst = std::max(worst, std::fabs(out.o.get(b, i, 0, d) - one.o.get(b, i, 0, d)));
    EXPECT_LE(worst, 2 * 4 * input_roundoff(p.dtype)) << "splits " << splits << " against 1 split";
  }
}

TEST(Fa2DecodeSplits, TheHeuristicSplitsSmallGridsAndNotFullOnes) {
  const std::vector<std::int32_t> lens = {4096};
  EXPECT_GT(kernels::fa2_decode_splits(1, 8, 1, 128, lens, 4096), 1);
  EXPECT_LE(kernels::fa2_decode_splits(1, 8, 1, 128, lens, 4096), 64);  // 64 key blocks of 64
  EXPECT_EQ(kernels::fa2_decode_splits(32, 32, 1, 128, lens, 4096), 1);  // 1024 blocks fill 132 SMs
  EXPECT_EQ(kernels::fa2_decode_splits(1, 1, 1, 64, std::vector<std::int32_t>{100}, 128), 1);  // one key block
}

// With one query row and no left window edge the query heads of a KV head run as the rows of one
// block (api.cpp, FlashAttention-2's GQA packing); a left edge past every key (the same attention)
// keeps them apart. Both must agree bit for bit, with one split and with several.
// The static read count of bench_flash's decode rows: with one query token the packed group reads
// each used key once whatever the split count; unpacked (4 query rows), each of a group's 4 heads
// reads it; a local window leaves keys no row sees unread.
TEST(Fa2DecodeReads, CountsTheReadsOfTheKernelsRanges) {
  const std::vector<std::int32_t> used{4096, 1000, 0};
  for (int splits : {0, 1, 7}) {
    const kernels::Fa2DecodeReads packed = kernels::fa2_decode_reads(32, 8, 1, 128, -1, -1, used, splits);
    EXPECT_TRUE(packed.group_packed);
    EXPECT_DOUBLE_EQ(packed.read_once, 1.0);
    EXPECT_DOUBLE_EQ(packed.reads_per_key, 1.0);
  }
  const kernels::Fa2DecodeReads unpacked = kernels::fa2_decode_reads(32, 8, 4, 128, -1, 0, used, 3);
  EXPECT_FALSE(unpacked.group_packed);
  EXPECT_DOUBLE_EQ(unpacked.read_once, 0.0);
  EXPECT_DOUBLE_EQ(unpacked.reads_per_key, 4.0);
  const kernels::Fa2DecodeReads local = kernels::fa2_decode_reads(8, 8, 1, 64, 100, 0, used, 2);
  EXPECT_GT(local.never_read, 0.9);  // 101 keys of 5096 seen
  EXPECT_NEAR(local.read_once + local.never_read, 1.0, 1e-12);
}

TEST(Fa2DecodeGqaPacking, PackedHeadsAreBitwiseTheUnpackedOnes) {
  for (DecodeCase c : {decode_cases()[1], decode_cases()[2], decode_cases()[0]}) {
    c.heads_q = 8, c.heads_kv = 2;  // groups of 4
    for (std::int64_t splits : {1, 3}) {
      c.num_splits = splits;
      const Problem packed = problem_of(c);
      Problem apart = packed;
      apart.window_left = apart.seqlen_k;  // every key still visible; no packing
      const DecodeInputs in = decode_inputs(packed, c.seed);
      const Outputs a = run_decode(fa2(), packed, in), b = run_decode(fa2(), apart, in);
      EXPECT_EQ(compare(packed, a, reference(packed, in)).bad, 0) << c.label;
      bool same = true;
      for (std::int64_t x = 0; x < a.o.storage_elements(); ++x) same = same && a.o.raw_bits(x) == b.o.raw_bits(x);
      for (std::int64_t x = 0; x < a.lse.storage_elements(); ++x) same = same && a.lse.raw_bits(x) == b.lse.raw_bits(x);
      EXPECT_TRUE(same) << c.label << " splits " << splits;
    }
  }
}

TEST(Fa2DecodePages, TheWalkVisitsTheRowsCacheRowNames) {
  // Every page size, both tile steps (16 rows at d 64, 8 at d 128), starts across several pages.
  const int pages = 9;
  std::vector<std::int32_t> table(2 * pages);
  for (int i = 0; i < 2 * pages; ++i) table[static_cast<std::size_t>(i)] = (7 * i + 3) % (2 * pages);
  for (int page_size = 0; page_size <= 256; page_size += 16)
    for (int step : {8, 16})
      for (int start = 0; start + 15 * step < (page_size == 0 ? 4096 : pages * page_size); start += 5) {
        auto walk = algo::CacheWalk<int, std::int32_t>::start(1, start, page_size, pages, table.data());
        for (int n = 0; n < 16; ++n, walk.advance(step)) {
          const algo::CacheRow<int> want = algo::cache_row(1, start + n * step, page_size, pages, table.data());
          const algo::CacheRow<int> got = walk.at();
          ASSERT_TRUE(got.outer == want.outer && got.row == want.row)
              << "page_size " << page_size << " step " << step << " start " << start << " n " << n;
        }
      }
}

// ---- the deliberately broken variants: each fails the comparison the real one passes ----

struct Twin {
  kernels::FlashDecodeFlaw flaw;
  DecodeCase shows_it;
};

std::vector<Twin> twins() {
  DecodeCase empty_first = sweep_case(2);
  empty_first.lens = {0, 300};  // every split of sequence 0 empty: the unguarded merge gives NaN
  DecodeCase paged = decode_cases()[2];  // page 16, NaN slots past the used lengths and spare pages
  return {{kernels::FlashDecodeFlaw::split_skips_last_block, sweep_case(2)},
          {kernels::FlashDecodeFlaw::combine_without_empty_guard, empty_first},
          {kernels::FlashDecodeFlaw::page_from_allocated_length, paged},
          {kernels::FlashDecodeFlaw::later_sequences_unwritten, sweep_case(2)}};
}

void PrintTo(const Twin& t, std::ostream* os) { *os << fa2_decode_flaw_name(t.flaw) << " on " << t.shows_it.label; }

class Fa2DecodeTwin : public ::testing::TestWithParam<Twin> {};

TEST_P(Fa2DecodeTwin, FailsTheComparisonTheRealOnePasses) {
  const Twin& t = GetParam();
  EXPECT_EQ(run_and_compare(fa2(), t.shows_it).bad, 0) << "the real kernel must pass this case";
  const std::unique_ptr<AttentionImpl> broken = make_fa2_attention(false, t.flaw);
  EXPECT_EQ(broken->name(), std::string("fa2~") + fa2_decode_flaw_name(t.flaw));
  const Comparison c = run_and_compare(*broken, t.shows_it);
  EXPECT_GT(c.bad, 0) << fa2_decode_flaw_name(t.flaw) << " passed (worst O error " << c.worst_o_ratio << " x tolerance)";
}

INSTANTIATE_TEST_SUITE_P(Flaws, Fa2DecodeTwin, ::testing::ValuesIn(twins()),
                         [](const auto& info) { return std::string(fa2_decode_flaw_name(info.param.flaw)); });

// ---- the declaration and the API's errors ----

TEST(Fa2DecodeSupport, Fa2DeclaresCachesAndFa1DoesNot) {
  EXPECT_TRUE(fa2().declared_support().kv_cache);
  EXPECT_TRUE(fa2().declared_support().paged);
  if (AttentionImpl* fa1 = find_implementation("fa1")) {
    EXPECT_FALSE(fa1->declared_support().kv_cache);
    Problem p = problem_of(decode_cases()[0]);
    EXPECT_NE(fa1->unsupported_reason(p, false), "");
  }
  Problem big = problem_of(decode_cases()[0]);
  big.head_dim = 256;
  EXPECT_NE(fa2().unsupported_reason(big, false).find("KV-cache path is not built for head_dim bucket 256"),
            std::string::npos);
}

struct PagedFixture {
  // q [2, 1, 2, 64]; a pool of 4 pages of 16 slots, 1 kv head; 2 pages per sequence.
  static constexpr auto kHost = kernels::FlashTarget::emulated;
  kernels::FlashBuffer q{kHost, 2 * 2 * 64 * 2}, k{kHost, 4 * 16 * 64 * 2}, v{kHost, 4 * 16 * 64 * 2},
      o{kHost, 2 * 2 * 64 * 2};
  std::vector<float> lse = std::vector<float>(4);
  std::vector<std::int32_t> table = {3, 0, 1, 2}, lens = {5, 32};
  kernels::FlashForwardTensors t;
  kernels::FlashOptions options;
  PagedFixture() {
    std::memset(q.data(), 0, q.bytes());
    std::memset(k.data(), 0, k.bytes());
    std::memset(v.data(), 0, v.bytes());
    t.q = {q.data(), {2, 1, 2, 64}, {128, 128, 64, 1}};
    t.k = {k.data(), {4, 16, 1, 64}, {1024, 64, 64, 1}};
    t.v = {v.data(), {4, 16, 1, 64}, {1024, 64, 64, 1}};
    t.o = {o.data(), {2, 1, 2, 64}, {128, 128, 64, 1}};
    t.lse = lse.data();
    options.page_size = 16;
    options.block_table = table;
    options.cache_seqlens = lens;
  }
};

TEST(Fa2DecodeApi, ValidPagedCallRuns) {
  PagedFixture f;
  EXPECT_EQ(kernels::fa2_forward_error(PagedFixture::kHost, f.t, f.options), "");
  EXPECT_NO_THROW(kernels::fa2_forward(PagedFixture::kHost, kernels::FlashDtype::fp16, f.t, f.options));
  for (float x : f.lse) EXPECT_TRUE(std::isfinite(x));
}

TEST(Fa2DecodeApi, BadArgumentsGetOneLineErrors) {
  using Spoil = std::function<void(PagedFixture&)>;
  const std::pair<std::string, Spoil> bad[] = {
      {"fa2: block_table entry 1 (4) is outside the pool of 4 pages", [](auto& f) { f.table[1] = 4; }},
      {"fa2: block_table entry 0 (-1) is outside the pool", [](auto& f) { f.table[0] = -1; }},
      {"fa2: cache_seqlens[1] (33) is outside the cache's capacity 0..32", [](auto& f) { f.lens[1] = 33; }},
      {"fa2: cache_seqlens must hold one length per sequence (got 1 for batch 2)",
       [](auto& f) { f.options.cache_seqlens = std::span<const std::int32_t>(f.lens).first(1); }},
      {"fa2: page_size (24) must be a multiple of 16 up to 256", [](auto& f) { f.options.page_size = 24; }},
      {"fa2: k (the page pool) has seqlen (16) where page_size 32 is expected", [](auto& f) { f.options.page_size = 32; }},
      {"fa2: block_table must hold batch x pages_per_sequence entries (got 3 for batch 2)",
       [](auto& f) { f.options.block_table = std::span<const std::int32_t>(f.table).first(3); }},
      {"fa2: num_splits (129) must be 0 (heuristic) to 128", [](auto& f) { f.options.num_splits = 129; }},
      {"fa2: the soft cap and ALiBi are not built for the KV-cache path", [](auto& f) { f.options.softcap = 30.0f; }},
      {"fa2: block_table given without a page_size",
       [](auto& f) { f.options.page_size = 0; }},
      {"fa2: v has heads", [](auto& f) { f.t.v.sizes[2] = 2; }},
      {"fa2: the KV-cache path is not built for head_dim bucket 32",
       [](auto& f) { f.t.q.sizes[3] = f.t.k.sizes[3] = f.t.v.sizes[3] = f.t.o.sizes[3] = 32; }},
  };
  for (const auto& [expected, spoil] : bad) {
    PagedFixture f;
    spoil(f);
    const std::string e = kernels::fa2_forward_error(PagedFixture::kHost, f.t, f.options);
    EXPECT_EQ(e.rfind(expected, 0), 0u) << "expected '" << expected << "', got '" << e << "'";
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_THROW(kernels::fa2_forward(PagedFixture::kHost, kernels::FlashDtype::fp16, f.t, f.options),
                 std::invalid_argument);
  }
  PagedFixture f;
  kernels::FlashBackwardTensors bt{f.t.q, f.t.k, f.t.v, f.t.o, f.t.o, f.t.q, f.t.k, f.t.v, f.lse.data()};
  EXPECT_EQ(kernels::fa2_backward_error(PagedFixture::kHost, bt, f.options), "fa2: KV caches and split-KV are forward only");
}

// Appended keys through the API: a valid append runs; shared receiving pages, appends past the
// capacity and k_new without a decode call are one line each.
TEST(Fa2DecodeApi, AppendedKeysAreCheckedOneLineEach) {
  const auto with_new_keys = [](PagedFixture& f, kernels::FlashBuffer& kn) {
    std::memset(kn.data(), 0, kn.bytes());
    f.t.k_new = f.t.v_new = {kn.data(), {2, 1, 1, 64}, {64, 64, 64, 1}};
    f.lens = {5, 30};
    f.options.cache_seqlens = f.lens;
  };
  {
    PagedFixture f;
    kernels::FlashBuffer kn{PagedFixture::kHost, 2 * 64 * 2};
    with_new_keys(f, kn);
    EXPECT_EQ(kernels::fa2_forward_error(PagedFixture::kHost, f.t, f.options), "");
    EXPECT_NO_THROW(kernels::fa2_forward(PagedFixture::kHost, kernels::FlashDtype::fp16, f.t, f.options));
  }
  using Spoil = std::function<void(PagedFixture&)>;
  const std::pair<std::string, Spoil> bad[] = {
      {"fa2: page 3 receives sequence 0's appended keys but another used table entry maps it too",
       [](auto& f) { f.table = {3, 0, 3, 2}; f.options.block_table = f.table; }},
      {"fa2: cache_seqlens[1] + seqlen_new (32 + 1) exceeds the cache's capacity 32",
       [](auto& f) { f.lens[1] = 32; }},
      {"fa2: k_new and v_new (appended keys) need cache_seqlens",
       [](auto& f) { f.options.cache_seqlens = {}; }},
      {"fa2: k_new and v_new (appended keys) need cache_seqlens (a decode call)",
       [](auto& f) { f.options = kernels::FlashOptions{}; f.t.k = f.t.v = {f.k.data(), {2, 16, 1, 64}, {1024, 64, 64, 1}}; }},
  };
  for (const auto& [expected, spoil] : bad) {
    PagedFixture f;
    kernels::FlashBuffer kn{PagedFixture::kHost, 2 * 64 * 2};
    with_new_keys(f, kn);
    spoil(f);
    const std::string e = kernels::fa2_forward_error(PagedFixture::kHost, f.t, f.options);
    EXPECT_EQ(e.rfind(expected, 0), 0u) << "expected '" << expected << "', got '" << e << "'";
    EXPECT_THROW(kernels::fa2_forward(PagedFixture::kHost, kernels::FlashDtype::fp16, f.t, f.options),
                 std::invalid_argument);
  }
}

}  // namespace
}  // namespace flashproof
