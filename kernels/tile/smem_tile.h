// A tile of 16-bit elements in shared memory, kRows x kCols, stored row by row in 16-byte chunks
// whose position within their row is XOR-swizzled by the row index. ldmatrix reads 8 rows of one
// chunk column at once; unswizzled, rows kCols * 2 bytes apart would all fall into the same four
// banks (an 8-way conflict for kCols a multiple of 64). With the swizzle the 8 rows hit 8 (or, for
// kCols/8 not a multiple of 8, 4) distinct chunk positions, at no cost in memory. Used by the FA1 and
// FA2 kernels for every operand tile; the emulator checks each access against the tile's bounds.
#pragma once

#include <cstddef>

#include "core/host_device.h"

namespace flashproof::tile {

template <int kRowCount, int kColCount>
struct SmemTile {
  static_assert(kColCount % 32 == 0, "tile rows hold a multiple of 4 chunks of 8 elements");
  static constexpr int kRows = kRowCount;
  static constexpr int kCols = kColCount;
  static constexpr int kChunks = kCols / 8;                   // 16-byte chunks per row
  static constexpr int kSwizzle = kChunks % 8 == 0 ? 8 : 4;  // XOR keeps a chunk in its aligned group
  static constexpr int kSwizzlePeriod = kSwizzle * 8;         // columns after which the XOR pattern repeats
  static constexpr std::size_t kBytes = std::size_t{kRows} * kCols * 2;

  // Element offset of chunk `chunk` (8 contiguous elements) of row `row`.
  FP_HOST_DEVICE static constexpr int chunk_offset(int row, int chunk) {
    return row * kCols + (chunk ^ (row % kSwizzle)) * 8;
  }
  FP_HOST_DEVICE static constexpr int offset(int row, int col) { return chunk_offset(row, col / 8) + col % 8; }
};

}  // namespace flashproof::tile
