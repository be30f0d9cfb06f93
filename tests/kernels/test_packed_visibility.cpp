// Packed batches' visibility (kernels/algo/packed_batch.h, row_keys.h) against its definition
// (docs/spec.md "Packed batches"): a row sees a key iff both lie in the same sequence and that
// sequence's own bottom-right window admits the pair, with sides up to 2^63 - 1.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/algo/row_keys.h"
#include "tests/kernels/window_definition.h"

namespace flashproof {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(PackedBatch, VisibleKeysIsTheWindowAsAnInterval) {
  const std::int64_t sides[] = {-1, 0, 1, 3, 128, std::int64_t{1} << 40, kMax - 1, kMax};
  const std::int64_t lengths[][2] = {{7, 5}, {3, 129}, {129, 3}, {1, 1}, {4, 0}};
  for (auto [sq, sk] : lengths)
    for (std::int64_t left : sides)
      for (std::int64_t right : sides) {
        const algo::WindowMask<std::int64_t> m{sk - sq, left, right};
        for (std::int64_t i = 0; i < sq; ++i) {
          const algo::KeyRange<std::int64_t> r = algo::visible_keys(m, sk, i);
          ASSERT_LE(r.begin, r.end);
          for (std::int64_t j = -1; j <= sk; ++j) {
            const bool expected = j >= 0 && j < sk && window_admits(sq, sk, left, right, i, j);
            ASSERT_EQ(r.begin <= j && j < r.end, expected)
                << "sq " << sq << " sk " << sk << " window " << left << "," << right << " (" << i << ", " << j << ")";
          }
        }
      }
}

Problem packed(std::vector<std::int64_t> cu_q, std::vector<std::int64_t> cu_k, std::int64_t left, std::int64_t right) {
  Problem p;
  p.seqlen_q = cu_q.back(), p.seqlen_k = cu_k.back();
  p.cu_seqlens_q = std::move(cu_q), p.cu_seqlens_k = std::move(cu_k);
  p.window_left = left, p.window_right = right;
  EXPECT_EQ(p.validate(), "");
  return p;
}

// The definition, sequence by sequence, by a linear search for the sequences of i and j.
bool packed_wide(const Problem& p, std::int64_t i, std::int64_t j, bool top_left = false) {
  for (std::size_t s = 0; s + 1 < p.cu_seqlens_q.size(); ++s) {
    const std::int64_t q0 = p.cu_seqlens_q[s], q1 = p.cu_seqlens_q[s + 1], k0 = p.cu_seqlens_k[s], k1 = p.cu_seqlens_k[s + 1];
    if (i < q0 || i >= q1) continue;
    if (j < k0 || j >= k1) return false;
    const std::int64_t sq = top_left ? 0 : q1 - q0, sk = top_left ? 0 : k1 - k0;
    return window_admits(sq, sk, p.window_left, p.window_right, i - q0, j - k0);
  }
  ADD_FAILURE() << "row " << i << " in no sequence";
  return false;
}

TEST(PackedBatch, RowKeysSeeOnlyTheirSequenceAlignedToItsOwnEnd) {
  // Empty sequences on either side and both, a one-row one, a long one among short ones.
  const Problem shapes[] = {packed({0, 5, 5, 6, 12}, {0, 3, 7, 7, 15}, -1, 0),
                            packed({0, 0, 1, 2, 40}, {0, 2, 2, 3, 4}, -1, -1),
                            packed({0, 3, 3, 9}, {0, 9, 9, 12}, 2, 1),
                            packed({0, 17}, {0, 5}, -1, 0)};
  for (const Problem& p : shapes)
    for (const auto align : {algo::RowKeys::Align::bottom_right, algo::RowKeys::Align::top_left}) {
      const algo::RowKeys keys(p, align);
      for (std::int64_t i = 0; i < p.seqlen_q; ++i)
        for (std::int64_t j = 0; j < p.seqlen_k; ++j)
          ASSERT_EQ(keys.visible(i, j), packed_wide(p, i, j, align == algo::RowKeys::Align::top_left))
              << p.describe() << " (" << i << ", " << j << ")";
    }
}

TEST(PackedBatch, EmptySequencesHoldNoRow) {
  const Problem p = packed({0, 0, 2, 2, 2, 5}, {0, 1, 1, 4, 6, 6}, -1, -1);
  const algo::RowKeys keys(p);
  EXPECT_EQ(keys.sequences(), 5);
  const std::int64_t expected[] = {1, 1, 4, 4, 4};
  for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(keys.sequence_of_row(i), expected[i]) << i;
  // Sequence 4 has rows but no key: its rows see nothing.
  EXPECT_EQ(keys.of_row(3).begin, keys.of_row(3).end);
  EXPECT_EQ(keys.sequence_keys(0).begin, 1);
  EXPECT_EQ(keys.sequence_keys(0).end, 1);  // sequence 1 has no key either
}

// The dense problem is the packed problem of one sequence: the same keys for every row.
TEST(PackedBatch, ADenseProblemIsOneSequence) {
  Problem dense;
  dense.seqlen_q = 9, dense.seqlen_k = 4, dense.window_left = 1, dense.window_right = 0;
  const Problem one = packed({0, 9}, {0, 4}, 1, 0);
  const algo::RowKeys a(dense), b(one);
  for (std::int64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(a.of_row(i).begin, b.of_row(i).begin);
    EXPECT_EQ(a.of_row(i).end, b.of_row(i).end);
  }
}

}  // namespace
}  // namespace flashproof
