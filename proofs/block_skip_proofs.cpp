// Theorem 5, block skipping: the shipped block ranges and the mask-free-tile predicate of
// kernels/algo/block_ranges.h, against the mask the kernels apply (algo::pair_kept), instantiated
// with Z3 integers, for every tile shape in kernels/algo/tile_configs.h. Everything but block_m
// and block_n is symbolic: both sequence lengths (either order), both window sides (negative =
// unbounded, so causal, local and no mask are all instances) and the block indices. Obligations are quantifier-free: a universally
// quantified pair (i, j) is a free constant, and an existential one is an explicit witness term.
#include <z3++.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/tile_configs.h"
#include "proofs/catalog.h"
#include "proofs/z3_domain.h"

namespace flashproof::proofs {
namespace {

using Expr = z3::expr;
using D = algo::Domain<Expr>;
using Geometry = algo::TileGeometry<Expr>;
using Range = algo::BlockRange<Expr>;
using RangeFn = Range (*)(const Geometry&, Expr);
using NoMaskFn = Expr (*)(const Geometry&, Expr, Expr);

struct TileShape {
  int block_m;
  int block_n;
};

// Distinct (block_m, block_n) pairs of the tile table, in table order: a new shape there is
// proved without touching this file.
std::vector<TileShape> tile_shapes() {
  std::vector<TileShape> shapes;
  std::set<std::pair<int, int>> seen;
  for (const auto& t : algo::kTileConfigs) {
    if (seen.insert({t.block_m, t.block_n}).second) shapes.push_back({t.block_m, t.block_n});
  }
  return shapes;
}

std::string shape_label(const TileShape& s) {
  return "bm=" + std::to_string(s.block_m) + " bn=" + std::to_string(s.block_n);
}

// The symbolic problem for one tile shape, with the mask offset the library uses
// (Problem::mask_offset: seqlen_k - seqlen_q).
Geometry symbolic_geometry(z3::context& c, const TileShape& s) {
  const Expr seqlen_q = c.int_const("seqlen_q");
  const Expr seqlen_k = c.int_const("seqlen_k");
  return Geometry{c.int_val(s.block_m), c.int_val(s.block_n), seqlen_q, seqlen_k,
                  algo::WindowMask<Expr>{seqlen_k - seqlen_q, c.int_const("window_left"),
                                         c.int_const("window_right")}};
}

std::vector<Expr> nonempty_sequences(const Geometry& g) { return {g.seqlen_q >= 1, g.seqlen_k >= 1}; }

Expr in_half_open(const Expr& x, const Expr& lo, const Expr& hi) { return lo <= x && x < hi; }

// --- Deliberately wrong copies of the shipped functions, for the twins. ---

// Forward range whose end forgets the + 1: the block of the last visible key is skipped.
Range key_blocks_end_off_by_one(const Geometry& g, Expr m_block) {
  const Expr first_row = m_block * g.block_m;
  const Expr last_row = D::min(first_row + g.block_m, g.seqlen_q) - 1;
  const Expr key_blocks = algo::ceil_div(g.seqlen_k, g.block_n);
  const auto& w = g.mask;
  const Expr begin = D::select(w.window_left < 0, D::lit(0, m_block),
      D::max(D::lit(0, m_block), algo::floor_div(first_row + w.offset - w.window_left, g.block_n)));
  const Expr end = D::select(w.window_right < 0, key_blocks,
      D::min(key_blocks, algo::floor_div(last_row + w.offset + w.window_right, g.block_n)));
  return {begin, end};
}

// Backward range aligned top-left (offset taken as 0) while the mask is aligned bottom-right: when
// the lengths differ, rows that see the block are skipped and rows that see nothing are visited.
Range query_blocks_top_left(const Geometry& g, Expr n_block) {
  const Expr first_key = n_block * g.block_n;
  const Expr last_key = D::min(first_key + g.block_n, g.seqlen_k) - 1;
  const Expr query_blocks = algo::ceil_div(g.seqlen_q, g.block_m);
  const auto& w = g.mask;
  const Expr begin = D::select(w.window_right < 0, D::lit(0, n_block),
      D::max(D::lit(0, n_block), algo::floor_div(first_key - w.window_right, g.block_m)));
  const Expr end = D::select(w.window_left < 0, query_blocks,
      D::min(query_blocks, algo::floor_div(last_key + w.window_left, g.block_m) + 1));
  return {begin, end};
}

// Mask-free predicate whose right-side check uses the tile's last row instead of its first: the
// first rows may then miss keys at the tile's right edge.
Expr no_mask_right_from_last_row(const Geometry& g, Expr m_block, Expr n_block) {
  const Expr first_row = m_block * g.block_m;
  const Expr first_key = n_block * g.block_n;
  const Expr row_end = first_row + g.block_m;
  const Expr key_end = first_key + g.block_n;
  const auto& w = g.mask;
  const Expr inside = row_end <= g.seqlen_q && key_end <= g.seqlen_k;
  const Expr right_ok = w.window_right < 0 || key_end - 1 <= row_end - 1 + w.offset + w.window_right;
  const Expr left_ok = w.window_left < 0 || first_key >= row_end - 1 + w.offset - w.window_left;
  return inside && right_ok && left_ok;
}

// Mask-free key range whose right end forgets the tile's width: it admits the tile whose first key
// the right window edge still reaches, though its last key lies past it.
Range mask_free_right_from_first_key(const Geometry& g, Expr m_block) {
  const Range shipped = algo::mask_free_key_blocks(g, m_block);
  const Expr first_row = m_block * g.block_m;
  const auto& w = g.mask;
  const Expr full_blocks = algo::floor_div(g.seqlen_k, g.block_n);
  const Expr right_end = algo::floor_div(first_row + w.offset + w.window_right, g.block_n) + 1;
  const Expr end = D::select(first_row + g.block_m <= g.seqlen_q,
                             D::select(w.window_right < 0, full_blocks, D::min(full_blocks, right_end)), D::lit(0, m_block));
  return {shipped.begin, end};
}

Range shipped_key_blocks(const Geometry& g, Expr m) { return algo::key_blocks_for_query_block(g, m); }
Range shipped_query_blocks(const Geometry& g, Expr n) { return algo::query_blocks_for_key_block(g, n); }
Expr shipped_no_mask(const Geometry& g, Expr m, Expr n) { return algo::tile_needs_no_mask(g, m, n); }
Range shipped_mask_free_keys(const Geometry& g, Expr m) { return algo::mask_free_key_blocks(g, m); }

// --- Obligations. ---

std::vector<Expr> concat(std::vector<Expr> a, const std::vector<Expr>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A query block of the rows-outer loop: its rows [first_row, row_end) start inside the sequence.
struct QueryBlock {
  Expr index;
  Expr first_row;
  Expr row_end;
  std::vector<Expr> assumptions;
};

QueryBlock query_block(z3::context& c, const Geometry& g) {
  const Expr m_block = c.int_const("m_block");
  const Expr first_row = m_block * g.block_m;
  return {m_block, first_row, D::min(first_row + g.block_m, g.seqlen_q),
          concat(nonempty_sequences(g), {m_block >= 0, first_row < g.seqlen_q})};
}

// A key block of the keys-outer loop: its keys [first_key, key_end) start inside the sequence.
struct KeyBlock {
  Expr index;
  Expr first_key;
  Expr key_end;
  std::vector<Expr> assumptions;
};

KeyBlock key_block(z3::context& c, const Geometry& g) {
  const Expr n_block = c.int_const("n_block");
  const Expr first_key = n_block * g.block_n;
  return {n_block, first_key, D::min(first_key + g.block_n, g.seqlen_k),
          concat(nonempty_sequences(g), {n_block >= 0, first_key < g.seqlen_k})};
}

// Rows-outer soundness: the key block of any visible in-range pair of the query block is visited.
Obligation forward_soundness(z3::context& c, const TileShape& s, RangeFn key_blocks) {
  const Geometry g = symbolic_geometry(c, s);
  const QueryBlock q = query_block(c, g);
  const Expr i = c.int_const("i");
  const Expr j = c.int_const("j");
  const Range r = key_blocks(g, q.index);
  const Expr pair = in_half_open(i, q.first_row, q.row_end) && in_half_open(j, c.int_val(0), g.seqlen_k);
  return {"soundness " + shape_label(s), concat(q.assumptions, {pair, g.mask.visible(i, j)}),
          in_half_open(j / g.block_n, r.begin, r.end)};
}

// Rows-outer tightness: each visited key block holds a visible in-range pair. Witness key: the
// block's first key raised to the first row's leftmost visible key and to 0; witness row: the
// first row, or the first row whose right bound reaches that key. The witness row also sees the
// key from the left because left + right >= 0 whenever both sides are bounded (bounded is >= 0).
Obligation forward_tightness(z3::context& c, const TileShape& s, RangeFn key_blocks) {
  const Geometry g = symbolic_geometry(c, s);
  const QueryBlock q = query_block(c, g);
  const Expr n_block = c.int_const("n_block");
  const Range r = key_blocks(g, q.index);
  const Expr zero = c.int_val(0);
  const auto& w = g.mask;
  const Expr leftmost_key =
      D::select(w.window_left < 0, zero, D::max(zero, q.first_row + w.offset - w.window_left));
  const Expr key = D::max(n_block * g.block_n, leftmost_key);
  const Expr row =
      D::select(w.window_right < 0, q.first_row, D::max(q.first_row, key - w.offset - w.window_right));
  const Expr in_tile = in_half_open(key, n_block * g.block_n, (n_block + 1) * g.block_n) &&
                       in_half_open(row, q.first_row, q.row_end);
  return {"tightness " + shape_label(s), concat(q.assumptions, {in_half_open(n_block, r.begin, r.end)}),
          in_tile && in_half_open(key, zero, g.seqlen_k) && w.visible(row, key)};
}

// Keys-outer soundness: the query block of any visible in-range pair of the key block is visited.
Obligation backward_soundness(z3::context& c, const TileShape& s, RangeFn query_blocks) {
  const Geometry g = symbolic_geometry(c, s);
  const KeyBlock k = key_block(c, g);
  const Expr i = c.int_const("i");
  const Expr j = c.int_const("j");
  const Range r = query_blocks(g, k.index);
  const Expr pair = in_half_open(j, k.first_key, k.key_end) && in_half_open(i, c.int_val(0), g.seqlen_q);
  return {"soundness " + shape_label(s), concat(k.assumptions, {pair, g.mask.visible(i, j)}),
          in_half_open(i / g.block_m, r.begin, r.end)};
}

// Keys-outer tightness, the mirror image: witness row is the query block's first row raised to the
// first row that sees the first key and to 0; witness key is the first key, or the first key that
// row's left bound admits.
Obligation backward_tightness(z3::context& c, const TileShape& s, RangeFn query_blocks) {
  const Geometry g = symbolic_geometry(c, s);
  const KeyBlock k = key_block(c, g);
  const Expr m_block = c.int_const("m_block");
  const Range r = query_blocks(g, k.index);
  const Expr zero = c.int_val(0);
  const auto& w = g.mask;
  const Expr topmost_row =
      D::select(w.window_right < 0, zero, D::max(zero, k.first_key - w.offset - w.window_right));
  const Expr row = D::max(m_block * g.block_m, topmost_row);
  const Expr key =
      D::select(w.window_left < 0, k.first_key, D::max(k.first_key, row + w.offset - w.window_left));
  const Expr in_tile = in_half_open(row, m_block * g.block_m, (m_block + 1) * g.block_m) &&
                       in_half_open(key, k.first_key, k.key_end);
  return {"tightness " + shape_label(s), concat(k.assumptions, {in_half_open(m_block, r.begin, r.end)}),
          in_tile && in_half_open(row, zero, g.seqlen_q) && w.visible(row, key)};
}

std::vector<Obligation> forward_obligations(z3::context& c, const TileShape& s, RangeFn key_blocks) {
  return {forward_soundness(c, s, key_blocks), forward_tightness(c, s, key_blocks)};
}

std::vector<Obligation> backward_obligations(z3::context& c, const TileShape& s, RangeFn query_blocks) {
  return {backward_soundness(c, s, query_blocks), backward_tightness(c, s, query_blocks)};
}

// The mask may be skipped exactly on full tiles whose every pair the kernels' mask keeps
// (algo::pair_kept: in range and visible).
// Soundness: an arbitrary pair of a mask-free tile is fine. Completeness: "every pair fine"
// instantiated at the four corners already forces the predicate, so a fortiori the universal
// hypothesis does.
std::vector<Obligation> mask_free_obligations(z3::context& c, const TileShape& s, NoMaskFn no_mask) {
  const Geometry g = symbolic_geometry(c, s);
  const Expr m_block = c.int_const("m_block");
  const Expr n_block = c.int_const("n_block");
  const Expr first_row = m_block * g.block_m;
  const Expr first_key = n_block * g.block_n;
  const Expr row_end = first_row + g.block_m;
  const Expr key_end = first_key + g.block_n;
  const std::vector<Expr> tile = concat(nonempty_sequences(g), {m_block >= 0, n_block >= 0});
  const Expr predicate = no_mask(g, m_block, n_block);
  const auto pair_ok = [&](const Expr& i, const Expr& j) {
    return algo::pair_kept(g.mask, g.seqlen_q, g.seqlen_k, i, j);
  };

  const Expr i = c.int_const("i");
  const Expr j = c.int_const("j");
  const Expr pair = in_half_open(i, first_row, row_end) && in_half_open(j, first_key, key_end);
  const std::vector<Expr> skipped = concat(tile, {predicate, pair});
  std::vector<Expr> corners_ok = tile;
  for (const Expr& row : {first_row, row_end - 1}) {
    for (const Expr& key : {first_key, key_end - 1}) corners_ok.push_back(pair_ok(row, key));
  }
  return {{"soundness " + shape_label(s), skipped, pair_ok(i, j)},
          {"completeness " + shape_label(s), corners_ok, predicate}};
}

// The mask-free key range is exactly the key blocks whose tile needs no mask, for any query block
// (one reaching past seqlen_q included): the forward's mask-free loop skips the mask on no tile
// that needs it (soundness) and runs every tile that does not (exactness: no speed left unclaimed).
std::vector<Obligation> mask_free_range_obligations(z3::context& c, const TileShape& s, RangeFn mask_free) {
  const Geometry g = symbolic_geometry(c, s);
  const Expr m_block = c.int_const("m_block");
  const Expr n_block = c.int_const("n_block");
  const std::vector<Expr> blocks = concat(nonempty_sequences(g), {m_block >= 0, n_block >= 0});
  const Range r = mask_free(g, m_block);
  const Expr in_range = in_half_open(n_block, r.begin, r.end);
  const Expr no_mask = algo::tile_needs_no_mask(g, m_block, n_block);
  return {{"soundness " + shape_label(s), concat(blocks, {in_range}), no_mask},
          {"exactness " + shape_label(s), concat(blocks, {no_mask}), in_range}};
}

template <class Fn, class Build>
std::vector<Obligation> for_every_shape(z3::context& c, Fn fn, Build build) {
  std::vector<Obligation> all;
  for (const TileShape& s : tile_shapes()) {
    for (auto& ob : build(c, s, fn)) all.push_back(std::move(ob));
  }
  return all;
}

}  // namespace

std::vector<ProofSpec> block_skip_proofs() {
  const std::string scope =
      " for every (block_m, block_n) of kTileConfigs, all seqlen_q, seqlen_k >= 1 and windows (negative "
      "side unbounded: causal, local, none), offset seqlen_k - seqlen_q; mathematical integers "
      "(block_skip_int32 shows the kernels' int arithmetic computes them)";
  return {
      {"block_skip_forward",
       "key_blocks_for_query_block visits exactly the key blocks holding a visible in-range pair of "
       "the query block (sound and tight)" + scope,
       "the end bound forgets the + 1, skipping the block of the last visible key",
       [](z3::context& c, Variant v) {
         const RangeFn range = v == Variant::shipped ? shipped_key_blocks : key_blocks_end_off_by_one;
         return for_every_shape(c, range, forward_obligations);
       }},
      {"block_skip_backward",
       "query_blocks_for_key_block visits exactly the query blocks holding a visible in-range pair of "
       "the key block (sound and tight)" + scope,
       "the range is aligned top-left (offset 0) while the mask is aligned bottom-right",
       [](z3::context& c, Variant v) {
         const RangeFn range = v == Variant::shipped ? shipped_query_blocks : query_blocks_top_left;
         return for_every_shape(c, range, backward_obligations);
       }},
      {"mask_free_tiles",
       "tile_needs_no_mask holds iff every pair of the full block_m x block_n tile is in range and "
       "visible" + scope,
       "the right-side corner check uses the tile's last row instead of its first",
       [](z3::context& c, Variant v) {
         const NoMaskFn no_mask = v == Variant::shipped ? shipped_no_mask : no_mask_right_from_last_row;
         return for_every_shape(c, no_mask, mask_free_obligations);
       }},
      {"mask_free_key_range",
       "mask_free_key_blocks is exactly the set of key blocks whose tile needs no mask "
       "(tile_needs_no_mask), for every query block" + scope,
       "the right end is taken from the tile's first key instead of its last",
       [](z3::context& c, Variant v) {
         const RangeFn range = v == Variant::shipped ? shipped_mask_free_keys : mask_free_right_from_first_key;
         return for_every_shape(c, range, mask_free_range_obligations);
       }},
  };
}

}  // namespace flashproof::proofs
