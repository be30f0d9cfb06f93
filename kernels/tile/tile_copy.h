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

// A KV cache's K and V tiles in one pass (the FA2 decode path). Each thread keeps one chunk column
// and copies rows r0, r0 + kStep, ...; walk_from(r0) returns a walk over those rows (algo::CacheWalk
// wrapped by the caller) with advance(kStep) and sources() -> {k, v} (column 0 of the row in each
// tile's source), so that a thread divides by the page size once per tile, reads the page table once
// per row for both tiles, and calls sources() only for rows in [first_row_valid, rows_valid) (no
// address past them is formed). `fallback` is any valid address, given to the zero-filling copies.
template <class Tile, int kThreads, class WalkFrom>
FP_HOST_DEVICE void copy_row_pairs_async(std::uint16_t* smem_k, std::uint16_t* smem_v, WalkFrom walk_from,
                                         const std::uint16_t* fallback, int rows_valid, int cols_valid, int tid,
                                         int first_row_valid = 0) {
  static_assert(kThreads % Tile::kChunks == 0 && Tile::kRows % (kThreads / Tile::kChunks) == 0);
  constexpr int kStep = kThreads / Tile::kChunks;
  const int chunk = tid % Tile::kChunks, r0 = tid / Tile::kChunks;
  const bool column_valid = chunk * 8 < cols_valid;
  auto walk = walk_from(r0);
  FP_UNROLL
  for (int j = 0; j < Tile::kRows / kStep; ++j) {
    const int row = r0 + j * kStep;
    const bool valid = column_valid && row >= first_row_valid && row < rows_valid;
    const std::uint16_t* k = fallback;
    const std::uint16_t* v = fallback;
    if (valid) {
      const auto src = walk.sources();
      k = src.k + chunk * 8, v = src.v + chunk * 8;
    }
    arch::cp_async_16_or_zero(smem_k + Tile::chunk_offset(row, chunk), k, valid);
    arch::cp_async_16_or_zero(smem_v + Tile::chunk_offset(row, chunk), v, valid);
    walk.advance(kStep);
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
