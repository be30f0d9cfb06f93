// Which tiles a kernel visits and which of them need the mask applied. A tile is a block of
// block_m query rows by block_n key columns; blocks are numbered from 0. Visiting exactly the
// blocks returned here is proved sound and tight (proofs/block_skip_proofs.cpp, docs/proofs.md):
// no tile holding a visible (row, key) pair is skipped, and every visited tile holds one.
// All bounds are half-open block index ranges [begin, end); end <= begin means nothing to visit.
#pragma once

#include "kernels/algo/int_math.h"
#include "kernels/algo/mask.h"

namespace flashproof::algo {

template <class Int>
struct BlockRange {
  Int begin;
  Int end;
};

template <class Int>
struct TileGeometry {
  Int block_m;   // query rows per tile
  Int block_n;   // key columns per tile
  Int seqlen_q;
  Int seqlen_k;
  WindowMask<Int> mask;
};

// The blocks of `block_size` indices, among [0, block_count), that meet the interval [lo, hi] of
// indices; a side flagged unbounded is open. Both loop orders reduce to this.
template <class Int, class Cond>
FP_HOST_DEVICE BlockRange<Int> blocks_meeting(Cond lo_unbounded, Int lo, Cond hi_unbounded, Int hi, Int block_size,
                                              Int block_count) {
  using D = Domain<Int>;
  const Int zero = D::lit(0, lo);
  const Int one = D::lit(1, lo);
  const Int begin = D::select(lo_unbounded, zero, D::max(zero, floor_div(lo, block_size)));
  const Int end = D::select(hi_unbounded, block_count, D::min(block_count, floor_div(hi, block_size) + one));
  return {begin, end};
}

// Key blocks a query block must visit (FA2 forward: rows outer, keys inner). The rows' visible
// intervals are consecutive shifts of one interval, so their union is one interval:
// [first_row + offset - left, last_row + offset + right], clipped to the keys.
template <class Int>
FP_HOST_DEVICE BlockRange<Int> key_blocks_for_query_block(const TileGeometry<Int>& g, Int m_block) {
  const Int first_row = m_block * g.block_m;
  const Int last_row = Domain<Int>::min(first_row + g.block_m, g.seqlen_q) - Domain<Int>::lit(1, m_block);
  const WindowMask<Int>& w = g.mask;
  return blocks_meeting(w.window_left < 0, first_row + w.offset - w.window_left, w.window_right < 0,
                        last_row + w.offset + w.window_right, g.block_n, ceil_div(g.seqlen_k, g.block_n));
}

// Query blocks a key block must visit (backward and FA1 forward: keys outer, rows inner). Row i
// sees key j iff j - offset - right <= i <= j - offset + left, so the rows seeing any key of the
// block form [first_key - offset - right, last_key - offset + left], clipped to the rows.
template <class Int>
FP_HOST_DEVICE BlockRange<Int> query_blocks_for_key_block(const TileGeometry<Int>& g, Int n_block) {
  const Int first_key = n_block * g.block_n;
  const Int last_key = Domain<Int>::min(first_key + g.block_n, g.seqlen_k) - Domain<Int>::lit(1, n_block);
  const WindowMask<Int>& w = g.mask;
  return blocks_meeting(w.window_right < 0, first_key - w.offset - w.window_right, w.window_left < 0,
                        last_key - w.offset + w.window_left, g.block_m, ceil_div(g.seqlen_q, g.block_m));
}

// The keys some query row sees, as a half-open interval [begin, end) of key indices (empty when no
// row sees any key). The rows' windows are consecutive shifts of one interval, so their union is
// [offset - left, seqlen_q - 1 + offset + right], clipped to the keys. The kernels zero-fill K and V
// outside it when they copy tiles, so that whatever lies there (NaN included) cannot reach an
// output through a product with a zero weight (0 * NaN is NaN).
template <class Int>
FP_HOST_DEVICE BlockRange<Int> keys_seen_by_any_row(const TileGeometry<Int>& g) {
  using D = Domain<Int>;
  const Int zero = D::lit(0, g.seqlen_k);
  const WindowMask<Int>& w = g.mask;
  const Int begin = D::select(w.window_left < 0, zero, D::max(zero, w.offset - w.window_left));
  const Int end = D::select(w.window_right < 0, g.seqlen_k,
                            D::min(g.seqlen_k, g.seqlen_q + w.offset + w.window_right));
  return {begin, end};
}

// True when the mask can be skipped for tile (m_block, n_block): the whole block_m x block_n tile
// lies inside both sequences and every (row, key) pair in it is visible. Otherwise the kernel must
// set the logits of invisible or out-of-range pairs to -inf (algo::pair_kept; the proofs show this
// accepts exactly the tiles whose every pair pair_kept keeps). The binding pairs are the tile's
// corners: (first row, last key) for the right side and (last row, first key) for the left side.
// It is the one rule for all three kernels: the FA1 forward and the backward (queries inner) test
// each tile with it; the FA2 forward (keys inner) uses its proved closed form below.
template <class Int>
FP_HOST_DEVICE auto tile_needs_no_mask(const TileGeometry<Int>& g, Int m_block, Int n_block) {
  const Int one = Domain<Int>::lit(1, m_block);
  const Int first_row = m_block * g.block_m;
  const Int first_key = n_block * g.block_n;
  const Int row_end = first_row + g.block_m;
  const Int key_end = first_key + g.block_n;
  const WindowMask<Int>& w = g.mask;
  const auto inside = row_end <= g.seqlen_q && key_end <= g.seqlen_k;
  const auto right_ok = w.window_right < 0 || key_end - one <= first_row + w.offset + w.window_right;
  const auto left_ok = w.window_left < 0 || first_key >= row_end - one + w.offset - w.window_left;
  return inside && right_ok && left_ok;
}

// The key blocks n >= 0 whose tile (m_block, n) needs no mask (tile_needs_no_mask), as one range:
// each of the predicate's three conditions bounds n from one side, so they meet in an interval.
// The FA2 forward runs these blocks through a loop without the mask and the rest of its key range
// with it (proofs/block_skip_proofs.cpp: exactly the mask-free blocks, for every tile shape).
//   key_end <= seqlen_k                                    n <= seqlen_k / block_n - 1
//   key_end - 1 <= first_row + offset + right              n <= (first_row + offset + right - (block_n - 1)) / block_n
//   first_key >= row_end - 1 + offset - left               n >= ceil((row_end - 1 + offset - left) / block_n)
// A query block reaching past seqlen_q has no mask-free tile (empty range).
template <class Int>
FP_HOST_DEVICE BlockRange<Int> mask_free_key_blocks(const TileGeometry<Int>& g, Int m_block) {
  using D = Domain<Int>;
  const Int zero = D::lit(0, m_block);
  const Int one = D::lit(1, m_block);
  const Int first_row = m_block * g.block_m;
  const Int row_end = first_row + g.block_m;
  const WindowMask<Int>& w = g.mask;
  const Int full_blocks = floor_div(g.seqlen_k, g.block_n);
  const Int right_end = floor_div(first_row + w.offset + w.window_right - (g.block_n - one), g.block_n) + one;
  const Int end = D::select(row_end <= g.seqlen_q,
                            D::select(w.window_right < 0, full_blocks, D::min(full_blocks, right_end)), zero);
  const Int begin = D::select(w.window_left < 0, zero,
                              D::max(zero, ceil_div(row_end - one + w.offset - w.window_left, g.block_n)));
  return {begin, end};
}

}  // namespace flashproof::algo
