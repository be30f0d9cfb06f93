// The block ranges and the mask-free-tile predicate against brute force over (row, key) pairs with
// the shipped mask predicate, for every tile shape of the table, seqlens around the block edges and
// causal, local, one-sided and unmasked windows. The Z3 proofs cover all sizes; this test checks the
// int instantiation the kernels actually run.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/tile_configs.h"

namespace flashproof::algo {
namespace {

using Geometry = TileGeometry<int>;
using RangeFn = BlockRange<int> (*)(const Geometry&, int);

std::vector<std::pair<int, int>> tile_shapes() {
  std::set<std::pair<int, int>> shapes;
  for (const auto& t : kTileConfigs) shapes.insert({t.block_m, t.block_n});
  return {shapes.begin(), shapes.end()};
}

// Lengths just around one and two tiles of either side, plus a few tiles.
std::vector<int> edge_lengths(int block_m, int block_n) {
  std::set<int> s{1, 2, block_m - 1, block_m, block_m + 1, block_n - 1, block_n + 1, 2 * block_m + 3, 300};
  return {s.begin(), s.end()};
}

constexpr int kWindows[] = {-1, 0, 1, 5, 17, 200};

// Visible-pair counts per tile, from the shipped mask predicate; out-of-range pairs do not count.
struct TileCounts {
  int query_blocks;
  int key_blocks;
  std::vector<int> visible;  // query_blocks x key_blocks

  int at(int m, int n) const { return visible[m * key_blocks + n]; }
};

TileCounts count_visible(const Geometry& g) {
  TileCounts t{ceil_div(g.seqlen_q, g.block_m), ceil_div(g.seqlen_k, g.block_n), {}};
  t.visible.assign(t.query_blocks * t.key_blocks, 0);
  for (int i = 0; i < g.seqlen_q; ++i) {
    for (int j = 0; j < g.seqlen_k; ++j) {
      if (g.mask.visible(i, j)) ++t.visible[(i / g.block_m) * t.key_blocks + j / g.block_n];
    }
  }
  return t;
}

bool contains(const BlockRange<int>& r, int block) { return r.begin <= block && block < r.end; }

// Number of outer blocks whose range differs from the set of inner blocks holding a visible pair.
// A range reaching outside [0, inner_blocks) also differs, unless it is empty.
template <class HasVisible>
int range_mismatches(const Geometry& g, RangeFn range, int outer_blocks, int inner_blocks,
                     HasVisible has_visible) {
  int mismatches = 0;
  for (int outer = 0; outer < outer_blocks; ++outer) {
    const BlockRange<int> r = range(g, outer);
    bool same = r.end <= r.begin || (r.begin >= 0 && r.end <= inner_blocks);
    for (int inner = 0; inner < inner_blocks; ++inner) {
      same = same && contains(r, inner) == has_visible(outer, inner);
    }
    mismatches += same ? 0 : 1;
  }
  return mismatches;
}

int forward_mismatches(const Geometry& g, const TileCounts& t, RangeFn key_blocks) {
  const auto has_visible = [&](int m, int n) { return t.at(m, n) > 0; };
  return range_mismatches(g, key_blocks, t.query_blocks, t.key_blocks, has_visible);
}

int backward_mismatches(const Geometry& g, const TileCounts& t, RangeFn query_blocks) {
  const auto has_visible = [&](int n, int m) { return t.at(m, n) > 0; };
  return range_mismatches(g, query_blocks, t.key_blocks, t.query_blocks, has_visible);
}

// A tile may skip the mask iff all block_m x block_n of its pairs are in range and visible.
int mask_mismatches(const Geometry& g, const TileCounts& t) {
  int mismatches = 0;
  for (int m = 0; m < t.query_blocks; ++m) {
    for (int n = 0; n < t.key_blocks; ++n) {
      const bool all_visible = t.at(m, n) == g.block_m * g.block_n;
      mismatches += tile_needs_no_mask(g, m, n) == all_visible ? 0 : 1;
    }
  }
  return mismatches;
}

// Calls check(geometry, counts) on every case of the sweep.
template <class Check>
void for_every_case(Check check) {
  for (const auto& [block_m, block_n] : tile_shapes()) {
    for (int seqlen_q : edge_lengths(block_m, block_n)) {
      for (int seqlen_k : edge_lengths(block_m, block_n)) {
        for (int left : kWindows) {
          for (int right : kWindows) {
            const Geometry g{block_m, block_n, seqlen_q, seqlen_k, {seqlen_k - seqlen_q, left, right}};
            check(g, count_visible(g));
          }
        }
      }
    }
  }
}

TEST(BlockRanges, MatchBruteForceOnEveryTileShape) {
  int cases = 0;
  for_every_case([&](const Geometry& g, const TileCounts& t) {
    ++cases;
    SCOPED_TRACE(testing::Message() << "bm=" << g.block_m << " bn=" << g.block_n << " sq=" << g.seqlen_q
                                    << " sk=" << g.seqlen_k << " window=(" << g.mask.window_left
                                    << ", " << g.mask.window_right << ")");
    EXPECT_EQ(forward_mismatches(g, t, key_blocks_for_query_block<int>), 0);
    EXPECT_EQ(backward_mismatches(g, t, query_blocks_for_key_block<int>), 0);
    EXPECT_EQ(mask_mismatches(g, t), 0);
  });
  EXPECT_GT(cases, 0);
}

// A copy of key_blocks_for_query_block whose end forgets the + 1: the sweep must catch it.
BlockRange<int> key_blocks_end_off_by_one(const Geometry& g, int m_block) {
  BlockRange<int> r = key_blocks_for_query_block(g, m_block);
  if (g.mask.window_right >= 0) {
    const int last_row = std::min((m_block + 1) * g.block_m, g.seqlen_q) - 1;
    r.end = std::min(r.end, floor_div(last_row + g.mask.offset + g.mask.window_right, g.block_n));
  }
  return r;
}

TEST(BlockRanges, SweepCatchesAnOffByOneEnd) {
  int mismatches = 0;
  for_every_case([&](const Geometry& g, const TileCounts& t) {
    mismatches += forward_mismatches(g, t, key_blocks_end_off_by_one);
  });
  EXPECT_GT(mismatches, 0);
}

// mask_free_key_blocks against the tiles whose every pair is in range and visible; key blocks
// past the sequence count as needing the mask, and an empty range may sit anywhere.
int mask_free_range_mismatches(const Geometry& g, const TileCounts& t, RangeFn mask_free) {
  int mismatches = 0;
  for (int m = 0; m < t.query_blocks; ++m) {
    const BlockRange<int> r = mask_free(g, m);
    for (int n = 0; n < t.key_blocks + 2; ++n) {
      const bool all_visible = n < t.key_blocks && t.at(m, n) == g.block_m * g.block_n;
      mismatches += contains(r, n) == all_visible ? 0 : 1;
    }
  }
  return mismatches;
}

TEST(BlockRanges, MaskFreeKeyBlocksMatchBruteForce) {
  int cases = 0, mask_free_tiles = 0;
  for_every_case([&](const Geometry& g, const TileCounts& t) {
    ++cases;
    SCOPED_TRACE(testing::Message() << "bm=" << g.block_m << " bn=" << g.block_n << " sq=" << g.seqlen_q
                                    << " sk=" << g.seqlen_k << " window=(" << g.mask.window_left
                                    << ", " << g.mask.window_right << ")");
    EXPECT_EQ(mask_free_range_mismatches(g, t, mask_free_key_blocks<int>), 0);
    for (int m = 0; m < t.query_blocks; ++m) {
      const BlockRange<int> r = mask_free_key_blocks(g, m);
      mask_free_tiles += std::max(0, r.end - r.begin);
    }
  });
  EXPECT_GT(cases, 0);
  EXPECT_GT(mask_free_tiles, 0);  // the sweep reaches mask-free tiles at all
}

// Its twin: the right end taken from the tile's first key (as proofs/ has it) must be caught.
BlockRange<int> mask_free_right_from_first_key(const Geometry& g, int m_block) {
  BlockRange<int> r = mask_free_key_blocks(g, m_block);
  if (g.mask.window_right >= 0 && (m_block + 1) * g.block_m <= g.seqlen_q)
    r.end = std::min(g.seqlen_k / g.block_n,
                     floor_div(m_block * g.block_m + g.mask.offset + g.mask.window_right, g.block_n) + 1);
  return r;
}

TEST(BlockRanges, SweepCatchesAMaskFreeRangeTooLong) {
  int mismatches = 0;
  for_every_case([&](const Geometry& g, const TileCounts& t) {
    mismatches += mask_free_range_mismatches(g, t, mask_free_right_from_first_key);
  });
  EXPECT_GT(mismatches, 0);
}

}  // namespace
}  // namespace flashproof::algo

namespace flashproof::algo {
namespace {

// keys_seen_by_any_row is exactly the set of keys with a visible pair, for every window and
// lengths on both sides of each other.
TEST(BlockRanges, KeysSeenByAnyRowMatchBruteForce) {
  const int lengths[] = {1, 2, 3, 7, 16, 33, 100};
  int checked = 0;
  for (int sq : lengths)
    for (int sk : lengths)
      for (int left : kWindows)
        for (int right : kWindows) {
          const Geometry g{16, 16, sq, sk, {sk - sq, left, right}};
          const BlockRange<int> seen = keys_seen_by_any_row(g);
          for (int j = 0; j < sk; ++j) {
            bool any = false;
            for (int i = 0; i < sq && !any; ++i) any = g.mask.visible(i, j);
            EXPECT_EQ(any, j >= seen.begin && j < seen.end)
                << "sq " << sq << " sk " << sk << " window " << left << "," << right << " key " << j;
            ++checked;
          }
        }
  EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace flashproof::algo
