// The FlashAttention-1 forward kernel (Algorithm 1 of the FlashAttention paper). One block per
// (batch, head) -- or per (query split, batch, head), see Fa1ForwardParams::query_splits. Key blocks
// are the outer loop: K_j and V_j stay in shared memory while the query blocks that see them
// (kernels/algo/block_ranges.h) stream through. Each inner step reads the rows' normalised state
// (O, l, m) from global memory, folds in the key block with the FA1 step of
// kernels/algo/online_softmax.h (fa1_combine) and writes the state back; the last key block of a
// query block writes O in the input type and the LSE instead.
//
// Within a step the key block is split across the warps, as FA1 does: warp w computes S and P V for
// keys [w * kKeysPerWarp, (w + 1) * kKeysPerWarp) of every row of the query block. The warps'
// row maxima, row sums and P V partials are combined through shared memory in a fixed order (so
// the result does not depend on scheduling), all weights taken relative to the block's max.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/online_softmax.h"
#include "kernels/arch/cp_async.h"
#include "kernels/arch/smem.h"
#include "kernels/arch/warp.h"
#include "kernels/fa1/params.h"
#include "kernels/launch.h"
#include "kernels/tile/mask_fragment.h"
#include "kernels/tile/smem_tile.h"
#include "kernels/tile/tile_copy.h"
#include "kernels/tile/warp_fragments.h"
#include "kernels/tile/warp_products.h"

namespace flashproof::kernels::FP_TARGET {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, arch::MmaTag kTag_>
struct Fa1ForwardTraits {
  static constexpr int kHeadDim = kHeadDim_, kBlockM = kBlockM_, kBlockN = kBlockN_, kWarps = kWarps_;
  static constexpr arch::MmaTag kTag = kTag_;  // the input type: one tensor-core instruction kind
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kKeysPerWarp = kBlockN / kWarps;
  static_assert(kKeysPerWarp % 16 == 0, "each warp's keys are whole k16 steps of P V");
  static_assert(kBlockM % 16 == 0 && kHeadDim % 32 == 0);
  static constexpr int kMTiles = kBlockM / 16;       // m16 tiles (every warp covers all rows)
  static constexpr int kSTiles = kKeysPerWarp / 8;   // n8 tiles of S per m16 tile
  static constexpr int kOTiles = kHeadDim / 8;       // n8 tiles of the P V partial per m16 tile
  using QTile = tile::SmemTile<kBlockM, kHeadDim>;
  using KvTile = tile::SmemTile<kBlockN, kHeadDim>;
  // Tensor-core instructions per warp per query block: S = Q K^T over its keys, then its P V partial.
  static constexpr int kMmasPerStep = kMTiles * kSTiles * (kHeadDim / 16) + kMTiles * (kSTiles / 2) * kOTiles;
  // The loop over head-dim steps of S = Q K^T is unrolled up to d 128 (its loads then need no
  // address arithmetic); at d 256 it stays rolled.
  static constexpr bool kUnrollHeadDim = kHeadDim <= 128;
  // The tensor-core instructions in the loop's machine code, where a rolled loop over head-dim
  // steps appears once (one swizzle period of them).
  static constexpr int kMmasInLoopCode =
      kMTiles * kSTiles * tile::kQktStepsInCode<QTile, kUnrollHeadDim> + kMTiles * (kSTiles / 2) * kOTiles;
  // Row stride of the P V partials in shared memory: 8 floats of padding put the 8 rows a warp
  // stores at once into distinct banks.
  static constexpr int kPartialStride = kHeadDim + 8;
  static constexpr int kRowFloats = 4 * kBlockM + 2 * kWarps * kBlockM;  // row state, coefficients, max, sum
  // K, V, Q[2] (the next query block prefetched), the warps' P V partials, then the row floats.
  static constexpr std::size_t kSmemBytes = 2 * KvTile::kBytes + 2 * QTile::kBytes +
                                            sizeof(float) * (kWarps * kBlockM * kPartialStride + kRowFloats);
};

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) fa1_forward_kernel(Fa1ForwardParams p) {
  constexpr arch::MmaTag kTag = Traits::kTag;
  using QTile = typename Traits::QTile;
  using KvTile = typename Traits::KvTile;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN, kWarps = Traits::kWarps;
  constexpr int kHeadDim = Traits::kHeadDim, kThreads = Traits::kThreads, kMTiles = Traits::kMTiles;
  constexpr int kSTiles = Traits::kSTiles, kOTiles = Traits::kOTiles, kStride = Traits::kPartialStride;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  constexpr float kLn2 = 0.693147180559945309f;
  using D = algo::Domain<float>;
  const FlashShape& s = p.shape;

  const int split = static_cast<int>(blockIdx.x), batch = static_cast<int>(blockIdx.y);
  const int head = static_cast<int>(blockIdx.z), kv_head = head / (s.heads_q / s.heads_kv);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int warp_key0 = warp * Traits::kKeysPerWarp;
  const int splits = p.query_splits;

  const algo::TileGeometry<int> g{kBlockM, kBlockN, s.seqlen_q, s.seqlen_k,
                                  {s.seqlen_k - s.seqlen_q, s.window_left, s.window_right}};
  const int key_blocks = (s.seqlen_k + kBlockN - 1) / kBlockN;
  const algo::BlockRange<int> seen = algo::keys_seen_by_any_row(g);  // K, V zero-filled outside
  const int query_blocks = (s.seqlen_q + kBlockM - 1) / kBlockM;

  std::uint16_t* k_s = dynamic_smem<std::uint16_t>();
  std::uint16_t* v_s = k_s + KvTile::kRows * KvTile::kCols;
  std::uint16_t* q_s = v_s + KvTile::kRows * KvTile::kCols;  // two buffers
  float* partial_s = reinterpret_cast<float*>(q_s + 2 * QTile::kRows * QTile::kCols);  // [warp][row][col]
  float* old_max_s = partial_s + kWarps * kBlockM * kStride;  // the rows' state before this key block
  float* old_sum_s = old_max_s + kBlockM;
  float* coef_old_s = old_sum_s + kBlockM;  // fa1_combine's coefficients per row
  float* coef_block_s = coef_old_s + kBlockM;
  float* warp_max_s = coef_block_s + kBlockM;  // [warp][row]
  float* warp_sum_s = warp_max_s + kWarps * kBlockM;
  constexpr int kQElements = QTile::kRows * QTile::kCols;

  const auto load_q = [&](int m_block, int buffer) {
    const int first_row = m_block * kBlockM;
    tile::copy_tile_async<QTile, kThreads>(q_s + buffer * kQElements, p.q.at(batch, first_row, head), p.q.row_stride,
                                           s.seqlen_q - first_row, s.head_dim, tid);
  };
  // The first block this split owns at or after `m_block`.
  const auto owned_from = [&](int m_block) { return m_block + ((split - m_block) % splits + splits) % splits; };
  const auto row_index = [&](int row) { return lse_index(s, batch, head, row); };
  // Per-lane ldmatrix offsets, computed once (tile::LaneOffsets).
  const auto q_lanes = tile::a_lane_offsets<QTile>(lane);
  const auto k_lanes = tile::b_pair_nk_lane_offsets<KvTile>(lane);
  const auto v_lanes = tile::a_lane_offsets<KvTile>(lane);

  FP_UNROLL
  for (int n_block = 0; n_block < key_blocks; ++n_block) {
    const algo::BlockRange<int> queries = algo::query_blocks_for_key_block(g, n_block);
    const int first = owned_from(queries.begin);
    if (first >= queries.end) continue;  // no owned query block sees this key block
    const int first_key = n_block * kBlockN;
    tile::copy_tile_async<KvTile, kThreads>(k_s, p.k.at(batch, first_key, kv_head), p.k.row_stride,
                                            seen.end - first_key, s.head_dim, tid, seen.begin - first_key);
    tile::copy_tile_async<KvTile, kThreads>(v_s, p.v.at(batch, first_key, kv_head), p.v.row_stride,
                                            seen.end - first_key, s.head_dim, tid, seen.begin - first_key);
    load_q(first, 0);
    arch::cp_async_commit();

    for (int m_block = first, step = 0; m_block < queries.end; m_block += splits, ++step) {
      const int buffer = step % 2;
      if (m_block + splits < queries.end) {
        load_q(m_block + splits, 1 - buffer);  // overlaps this step; that buffer was last read a step ago
        arch::cp_async_commit();
        arch::cp_async_wait<1>();
      } else {
        arch::cp_async_wait<0>();
      }
      const std::uint16_t* q_tile = q_s + buffer * kQElements;
      const int first_row = m_block * kBlockM;
      const algo::BlockRange<int> keys = algo::key_blocks_for_query_block(g, m_block);
      const bool first_visit = n_block == keys.begin, last_visit = n_block == keys.end - 1;

      // The rows' state so far; (-inf, 0) on the first visit (O = 0 is then never read). Each row's
      // state is read and written by the same thread (i = tid, tid + kThreads, ...), step after step.
      for (int i = tid; i < kBlockM; i += kThreads) {
        const int row = first_row + i;
        const bool stored = !first_visit && row < s.seqlen_q;
        arch::smem_store(old_max_s + i, stored ? p.row_max[row_index(row)] : kNegInf);
        arch::smem_store(old_sum_s + i, stored ? p.row_sum[row_index(row)] : 0.0f);
      }
      __syncthreads();  // Q has landed in every thread's view

      // S = Q K^T over this warp's keys, in log2 units, masked; the warp's max per row.
      arch::MmaC score[kMTiles][kSTiles];
      tile::clear(score);
      tile::add_q_kt<kTag, Traits::kUnrollHeadDim>(score, q_tile, q_lanes, 0, k_s, k_lanes, warp_key0);
      // Logits: scaled, then masked in one pass of selects (`&`) under one branch per tile. The tile
      // is tested with tile_needs_no_mask itself: the same set as a mask-free range per key block
      // (as the FA2 forward has), but that range costs d 64 and 128 more instructions per HMMA
      // and d 256 more registers than the sass budget allows (nvcc 13, sm_90).
      const tile::FragmentMask<tile::ScoreLayout::rows_by_keys, algo::MaskTest::all_tests> mask(
          g.mask, s.seqlen_q, s.seqlen_k, s.scale_log2, lane, first_row, first_key + warp_key0);
      mask.apply(score, tile::mask_if(!algo::tile_needs_no_mask(g, m_block, n_block)));
      FP_UNROLL
      for (int mt = 0; mt < kMTiles; ++mt) {
        FP_UNROLL
        for (int h = 0; h < 2; ++h) {
          float warp_max = kNegInf;
          FP_UNROLL
          for (int nt = 0; nt < kSTiles; ++nt) {
            FP_UNROLL
            for (int c = 0; c < 2; ++c) warp_max = D::max(warp_max, score[mt][nt].reg[2 * h + c]);
          }
          warp_max = D::max(warp_max, arch::shfl_xor(warp_max, 1));
          warp_max = D::max(warp_max, arch::shfl_xor(warp_max, 2));
          const int local_row = mt * 16 + arch::mma_c_element(lane, 2 * h).row;
          if (lane % 4 == 0) arch::smem_store(warp_max_s + warp * kBlockM + local_row, warp_max);
        }
      }
      __syncthreads();

      // Weights relative to the block's max (max over the warps, in warp order), the warp's row
      // sums, and its P V partial over its keys, P rounded to the input type.
      FP_UNROLL
      for (int mt = 0; mt < kMTiles; ++mt) {
        FP_UNROLL
        for (int h = 0; h < 2; ++h) {
          const int local_row = mt * 16 + arch::mma_c_element(lane, 2 * h).row;
          float block_max = kNegInf;
          FP_UNROLL
          for (int w = 0; w < kWarps; ++w) block_max = D::max(block_max, arch::smem_load(warp_max_s + w * kBlockM + local_row));
          const float offset = algo::exponent_offset(block_max);
          float warp_sum = 0.0f;
          FP_UNROLL
          for (int nt = 0; nt < kSTiles; ++nt) {
            FP_UNROLL
            for (int c = 0; c < 2; ++c) {
              const float w = algo::shifted_exp2(score[mt][nt].reg[2 * h + c], offset);
              score[mt][nt].reg[2 * h + c] = w;
              warp_sum += w;
            }
          }
          warp_sum += arch::shfl_xor(warp_sum, 1);
          warp_sum += arch::shfl_xor(warp_sum, 2);
          if (lane % 4 == 0) arch::smem_store(warp_sum_s + warp * kBlockM + local_row, warp_sum);
        }
      }
      arch::MmaC partial[kMTiles][kOTiles];
      tile::clear(partial);
      tile::add_p_v<kTag>(partial, score, v_s, v_lanes, warp_key0);
      float* my_partial = partial_s + warp * kBlockM * kStride;
      FP_UNROLL
      for (int mt = 0; mt < kMTiles; ++mt) {
        FP_UNROLL
        for (int nt = 0; nt < kOTiles; ++nt) {
          FP_UNROLL
          for (int i = 0; i < 4; ++i) {
            const arch::MatrixCoord at = arch::mma_c_element(lane, i);
            arch::smem_store(my_partial + (mt * 16 + at.row) * kStride + nt * 8 + at.col, partial[mt][nt].reg[i]);
          }
        }
      }
      __syncthreads();

      // Per row: the block's statistics and the FA1 step; the new state (or, on the last visit,
      // the LSE) goes back to global memory, the coefficients to shared memory for the O update.
      for (int i = tid; i < kBlockM; i += kThreads) {
        float block_max = kNegInf, block_sum = 0.0f;
        FP_UNROLL
        for (int w = 0; w < kWarps; ++w) {
          block_max = D::max(block_max, arch::smem_load(warp_max_s + w * kBlockM + i));
          block_sum += arch::smem_load(warp_sum_s + w * kBlockM + i);
        }
        const algo::Fa1Combine<float> c =
            algo::fa1_combine(arch::smem_load(old_max_s + i), arch::smem_load(old_sum_s + i), block_max, block_sum);
        arch::smem_store(coef_old_s + i, c.coef_old);
        arch::smem_store(coef_block_s + i, c.coef_block);
        const int row = first_row + i;
        if (row >= s.seqlen_q) continue;
        if (last_visit) {
          p.lse[row_index(row)] = algo::finalize_row(c.max, c.sum, kLn2).lse;
        } else {
          p.row_max[row_index(row)] = c.max;
          p.row_sum[row_index(row)] = c.sum;
        }
      }
      __syncthreads();

      // O = coef_old * O + coef_block * (sum of the warps' partials), element by element; each
      // element again has one owner thread across steps. The next step's first writes to shared
      // memory that this reads (the partials, the coefficients) come after its barriers.
      for (int e = tid; e < kBlockM * kHeadDim; e += kThreads) {
        const int i = e / kHeadDim, col = e % kHeadDim, row = first_row + i;
        if (row >= s.seqlen_q || col >= s.head_dim) continue;
        float pv = 0.0f;
        FP_UNROLL
        for (int w = 0; w < kWarps; ++w) pv += arch::smem_load(partial_s + (w * kBlockM + i) * kStride + col);
        float* accum = p.o_accum + row_index(row) * s.head_dim + col;
        const float old = first_visit ? 0.0f : *accum;
        const float o = D::mul(arch::smem_load(coef_old_s + i), old) + D::mul(arch::smem_load(coef_block_s + i), pv);
        if (last_visit)
          p.o.at(batch, row, head)[col] = arch::float_to_bits16<kTag>(o);
        else
          *accum = o;
      }
    }
  }

  // Query blocks that no key block sees: every row is empty, O = 0 and LSE = +inf.
  for (int m_block = split; m_block < query_blocks; m_block += splits) {
    const algo::BlockRange<int> keys = algo::key_blocks_for_query_block(g, m_block);
    if (keys.begin < keys.end) continue;
    for (int e = tid; e < kBlockM * s.head_dim; e += kThreads) {
      const int row = m_block * kBlockM + e / s.head_dim;
      if (row < s.seqlen_q) p.o.at(batch, row, head)[e % s.head_dim] = 0;
    }
    for (int i = tid; i < kBlockM; i += kThreads) {
      const int row = m_block * kBlockM + i;
      if (row < s.seqlen_q) p.lse[row_index(row)] = std::numeric_limits<float>::infinity();
    }
  }
}

template <class Traits>
void launch_fa1_forward(const Fa1ForwardParams& p) {
  const Dim3 grid{static_cast<unsigned>(p.query_splits), static_cast<unsigned>(p.shape.batch),
                  static_cast<unsigned>(p.shape.heads_q)};
  launch_kernel("fa1_forward", grid, Dim3{Traits::kThreads, 1, 1}, Traits::kSmemBytes, fa1_forward_kernel<Traits>, p);
}

}  // namespace flashproof::kernels::FP_TARGET
