// Global -> shared copy of a tile of rows (one sequence position each) with cp.async: rows past
// `rows_valid` (the ragged end of a sequence) and columns past `cols_valid` (the head dim padded
// to the tile width) are zero-filled, so padded logits are 0 and padded values contribute nothing.
// All threads of the block call it; each issues the 16-byte chunks i = tid, tid + threads, ...
// The caller commits and waits (kernels/arch/cp_async.h).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kernels/arch/cp_async.h"
#include "kernels/loop_pragmas.h"

namespace flashproof::tile {

// gmem points at (row 0, column 0) of the tile; row r starts at gmem + r * row_stride. cols_valid is
// a multiple of 8 and row_stride too (16-byte chunks stay aligned; the API checks this). Rows
// below first_row_valid are zero-filled as well (K and V rows of keys no query row sees,
// kernels/algo/block_ranges.h keys_seen_by_any_row); they are never read from global memory.
template <class Tile, int kThreads>
FP_HOST_DEVICE void copy_tile_async(std::uint16_t* smem, const std::uint16_t* gmem, long long row_stride,
                                    int rows_valid, int cols_valid, int tid, int first_row_valid = 0) {
  for (int i = tid; i < Tile::kRows * Tile::kChunks; i += kThreads) {
    const int row = i / Tile::kChunks, chunk = i % Tile::kChunks;
    const bool valid = row >= first_row_valid && row < rows_valid && chunk * 8 < cols_valid;
    const std::uint16_t* src = valid ? gmem + row * row_stride + chunk * 8 : gmem;
    arch::cp_async_16_or_zero(smem + Tile::chunk_offset(row, chunk), src, valid);
  }
}

// copy_tile_async with each row's source given by a functor, row_source(row) -> const uint16_t*
// (column 0 of that row): a KV cache's tile, whose rows may lie in different pages
// (algo/paged_kv.h). The functor is called only for rows in [first_row_valid, rows_valid), so no
// address past them is formed (a page-table entry past a sequence's used length is not read);
// `fallback` is any valid address, given to the zero-filling copies.
template <class Tile, int kThreads, class RowSource>
FP_HOST_DEVICE void copy_rows_async(std::uint16_t* smem, RowSource row_source, const std::uint16_t* fallback,
                                    int rows_valid, int cols_valid, int tid, int first_row_valid = 0) {
  for (int i = tid; i < Tile::kRows * Tile::kChunks; i += kThreads) {
    const int row = i / Tile::kChunks, chunk = i % Tile::kChunks;
    const bool valid = row >= first_row_valid && row < rows_valid && chunk * 8 < cols_valid;
    const std::uint16_t* src = valid ? row_source(row) + chunk * 8 : fallback;
    arch::cp_async_16_or_zero(smem + Tile::chunk_offset(row, chunk), src, valid);
  }
}

// A tile that lies wholly inside the data (every row valid, cols_valid == Tile::kCols), without a
// per-chunk test (the FA2 forward's mask-free loop). Chunk i = tid + j * kThreads.
// Where a row's chunks divide the threads, each thread keeps one chunk column (rows r0, r0 + kStep,
// ...); with kStep a multiple of the swizzle period its destinations are one offset plus immediates.
template <class Tile, int kThreads>
FP_HOST_DEVICE void copy_full_tile_async(std::uint16_t* smem, const std::uint16_t* gmem, long long row_stride,
                                         int tid) {
  constexpr int kTotal = Tile::kRows * Tile::kChunks;
  if constexpr (kThreads % Tile::kChunks == 0 && kTotal % kThreads == 0) {
    constexpr int kStep = kThreads / Tile::kChunks;
    const int chunk = tid % Tile::kChunks, r0 = tid / Tile::kChunks;
    const std::uint16_t* src = gmem + r0 * row_stride + chunk * 8;
    const long long src_step = kStep * row_stride;
    std::uint16_t* dst = smem + Tile::chunk_offset(r0, chunk);
    FP_UNROLL
    for (int j = 0; j < Tile::kRows / kStep; ++j) {
      if constexpr (kStep % Tile::kSwizzle == 0)
        arch::cp_async_16(dst + j * kStep * Tile::kCols, src + j * src_step);
      else
        arch::cp_async_16(smem + Tile::chunk_offset(r0 + j * kStep, chunk), src + j * src_step);
    }
  } else if constexpr (kTotal <= 8 * kThreads) {  // unrolled, a few chunks per thread
    FP_UNROLL
    for (int j = 0; j < (kTotal + kThreads - 1) / kThreads; ++j) {
      const int i = tid + j * kThreads;
      if (kTotal % kThreads == 0 || i < kTotal) {
        const int row = i / Tile::kChunks, chunk = i % Tile::kChunks;
        arch::cp_async_16(smem + Tile::chunk_offset(row, chunk), gmem + row * row_stride + chunk * 8);
      }
    }
  } else {  // rolled: unrolled, many chunks' addresses would compete with the loop for registers
    for (int i = tid; i < kTotal; i += kThreads) {
      const int row = i / Tile::kChunks, chunk = i % Tile::kChunks;
      arch::cp_async_16(smem + Tile::chunk_offset(row, chunk), gmem + row * row_stride + chunk * 8);
    }
  }
}

}  // namespace flashproof::tile
