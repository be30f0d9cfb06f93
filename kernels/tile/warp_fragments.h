// mma.m16n8k16 operand fragments of one warp, loaded from SmemTiles with ldmatrix, and the reuse of
// an fp32 accumulator as the A operand of the next product (P = softmax(S) feeding P*V). Which lane
// addresses which row follows kernels/arch/ldmatrix.h: lanes 8j..8j+7 give the 8 rows of matrix j,
// and matrix j fills register j of every lane, in the register order of kernels/arch/mma.h.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kernels/arch/convert.h"
#include "kernels/arch/ldmatrix.h"
#include "kernels/arch/mma.h"
#include "kernels/loop_pragmas.h"

namespace flashproof::tile {

// A (16 x 16, m x k) from a tile stored [m][k]. Matrices: (m 0-7, k 0-7), (m 8-15, k 0-7),
// (m 0-7, k 8-15), (m 8-15, k 8-15).
template <class Tile>
FP_HOST_DEVICE arch::MmaA load_a(const std::uint16_t* smem, int m0, int k0, int lane) {
  arch::MmaA a;
  arch::ldmatrix<4>(smem + Tile::offset(m0 + lane % 16, k0 + 8 * (lane / 16)), a.reg);
  return a;
}

// A (16 x 16, m x k) from a tile stored [k][m] (transposed): the same four matrices, each read
// column-major with .trans; matrix j's rows are k0 + 8 * (j / 2) + 0..7 at column m0 + 8 * (j % 2).
template <class Tile>
FP_HOST_DEVICE arch::MmaA load_a_transposed(const std::uint16_t* smem, int m0, int k0, int lane) {
  const int j = lane / 8;
  arch::MmaA a;
  arch::ldmatrix<4, true>(smem + Tile::offset(k0 + 8 * (j / 2) + lane % 8, m0 + 8 * (j % 2)), a.reg);
  return a;
}

// B (16 x 8, k x n) from a tile stored [n][k] (K in S = Q K^T): matrices (k 0-7), (k 8-15), rows n.
template <class Tile>
FP_HOST_DEVICE arch::MmaB load_b_from_nk(const std::uint16_t* smem, int n0, int k0, int lane) {
  arch::MmaB b;
  arch::ldmatrix<2>(smem + Tile::offset(n0 + lane % 8, k0 + 8 * ((lane / 8) % 2)), b.reg);
  return b;
}

// B (16 x 8, k x n) from a tile stored [k][n] (V in O = P V): rows k read column-major with .trans.
template <class Tile>
FP_HOST_DEVICE arch::MmaB load_b_from_kn(const std::uint16_t* smem, int n0, int k0, int lane) {
  arch::MmaB b;
  arch::ldmatrix<2, true>(smem + Tile::offset(k0 + lane % 16, n0), b.reg);
  return b;
}

// ---- Loads at offsets computed once per lane ----
// The loads above compute a swizzled address per call. In an unrolled loop every call starts at a
// compile-time (row0, chunk0) with row0 a multiple of 8 and chunk0 even, so a lane's row keeps its
// swizzle phase and the chunk it reads is chunk0 ^ u for a per-lane u < kSwizzle. That splits into
// chunk0's high bits (compile time) and one of kSwizzle / 2 per-lane offsets: an access is then a
// register plus an immediate, with no address arithmetic in the loop.
template <class Tile>
struct LaneOffsets {
  static constexpr int kPhases = Tile::kSwizzle / 2;
  int at[kPhases];

  // The lane addresses row row0 + lane_row, chunk chunk0 + lane_chunk (lane_chunk 0 or 1).
  FP_HOST_DEVICE LaneOffsets(int lane_row, int lane_chunk) {
    const int u = lane_chunk ^ (lane_row % Tile::kSwizzle);
    FP_UNROLL
    for (int j = 0; j < kPhases; ++j) at[j] = lane_row * Tile::kCols + ((2 * j) ^ u) * 8;
  }
  // Equals Tile::offset(row0 + lane_row, 8 * (chunk0 + lane_chunk)) for row0 % 8 == 0 and even chunk0.
  FP_HOST_DEVICE int operator()(int row0, int chunk0) const {
    return row0 * Tile::kCols + (chunk0 & ~(Tile::kSwizzle - 1)) * 8 + at[(chunk0 % Tile::kSwizzle) / 2];
  }
};

// load_a's lanes: row lane % 16, chunk lane / 16.
template <class Tile>
FP_HOST_DEVICE LaneOffsets<Tile> a_lane_offsets(int lane) { return {lane % 16, lane / 16}; }

template <class Tile>
FP_HOST_DEVICE arch::MmaA load_a(const std::uint16_t* smem, const LaneOffsets<Tile>& lanes, int m0, int k0) {
  arch::MmaA a;
  arch::ldmatrix<4>(smem + lanes(m0, k0 / 8), a.reg);
  return a;
}

// Two B operands, n tiles n0 and n0 + 8, from a tile stored [n][k] with one x4 ldmatrix. Matrices:
// (n0.., k 0-7), (n0.., k 8-15), (n0 + 8.., k 0-7), (n0 + 8.., k 8-15); lanes: row lane % 8 +
// 8 * (lane / 16), chunk (lane / 8) % 2.
template <class Tile>
FP_HOST_DEVICE LaneOffsets<Tile> b_pair_nk_lane_offsets(int lane) { return {lane % 8 + 8 * (lane / 16), (lane / 8) % 2}; }

template <class Tile>
FP_HOST_DEVICE void load_b_pair_from_nk(const std::uint16_t* smem, const LaneOffsets<Tile>& lanes, int n0, int k0,
                                        arch::MmaB& first, arch::MmaB& second) {
  std::uint32_t r[4];
  arch::ldmatrix<4>(smem + lanes(n0, k0 / 8), r);
  first.reg[0] = r[0], first.reg[1] = r[1], second.reg[0] = r[2], second.reg[1] = r[3];
}

// Two B operands, n tiles n0 and n0 + 8 (n0 % 16 == 0), from a tile stored [k][n], read with .trans:
// matrices (k 0-7, n0..), (k 8-15, n0..), (k 0-7, n0 + 8..), (k 8-15, n0 + 8..); lanes: row lane % 16,
// chunk lane / 16 (the lanes of load_a).
template <class Tile>
FP_HOST_DEVICE void load_b_pair_from_kn(const std::uint16_t* smem, const LaneOffsets<Tile>& lanes, int n0, int k0,
                                        arch::MmaB& first, arch::MmaB& second) {
  std::uint32_t r[4];
  arch::ldmatrix<4, true>(smem + lanes(k0, n0 / 8), r);
  first.reg[0] = r[0], first.reg[1] = r[1], second.reg[0] = r[2], second.reg[1] = r[3];
}

// Zeroes fp32 accumulators: a lane's share of kN (or kM x kN) m16n8 tiles.
template <int kN>
FP_HOST_DEVICE void clear(arch::MmaC (&c)[kN]) {
  FP_UNROLL
  for (int nt = 0; nt < kN; ++nt)
    FP_UNROLL
    for (int i = 0; i < 4; ++i) c[nt].reg[i] = 0.0f;
}
template <int kM, int kN>
FP_HOST_DEVICE void clear(arch::MmaC (&c)[kM][kN]) {
  FP_UNROLL
  for (int mt = 0; mt < kM; ++mt) clear(c[mt]);
}

// The A operand (16 x 16) holding the accumulator tiles `left` (columns 0-7) and `right` (8-15),
// rounded to the input type: a C fragment's (row g, columns 2t, 2t+1) and (row g + 8, ...) are
// exactly the A fragment's registers 0 and 1 (left) or 2 and 3 (right).
template <arch::MmaTag kTag>
FP_HOST_DEVICE inline arch::MmaA accumulators_as_a(const arch::MmaC& left, const arch::MmaC& right) {
  arch::MmaA a;
  a.reg[0] = arch::pack_rounded<kTag>(left.reg[0], left.reg[1]);
  a.reg[1] = arch::pack_rounded<kTag>(left.reg[2], left.reg[3]);
  a.reg[2] = arch::pack_rounded<kTag>(right.reg[0], right.reg[1]);
  a.reg[3] = arch::pack_rounded<kTag>(right.reg[2], right.reg[3]);
  return a;
}

}  // namespace flashproof::tile
