// The FlashAttention-2 forward kernel. One block per (query block, batch, head); the query tile is
// split across the warps by rows (each warp owns its rows: no reduction between warps); K and V
// tiles stream through double-buffered shared memory with cp.async. S and the output accumulator
// stay in fp32 registers; softmax is the FA2 step of kernels/algo/online_softmax.h in log2 units
// (log2(e) folded into the scale); O is divided by l once at the end, staged through shared memory
// and stored in 16-byte chunks, and the natural-log LSE stored.
// The key blocks visited and the tiles masked come from kernels/algo/block_ranges.h, whose choice is
// proved sound and tight in proofs/; the mask itself is applied by tile::FragmentMask.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/online_softmax.h"
#include "kernels/arch/convert.h"
#include "kernels/arch/cp_async.h"
#include "kernels/arch/smem.h"
#include "kernels/arch/warp.h"
#include "kernels/fa2/params.h"
#include "kernels/launch.h"
#include "kernels/tile/mask_fragment.h"
#include "kernels/tile/smem_tile.h"
#include "kernels/tile/tile_copy.h"
#include "kernels/tile/warp_fragments.h"
#include "kernels/tile/warp_products.h"

namespace flashproof::kernels::FP_TARGET {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, arch::MmaTag kTag_, bool kScoreMod_ = false>
struct Fa2ForwardTraits {
  static constexpr int kHeadDim = kHeadDim_, kBlockM = kBlockM_, kBlockN = kBlockN_, kWarps = kWarps_;
  static constexpr arch::MmaTag kTag = kTag_;  // the input type: one tensor-core instruction kind
  // The soft cap and ALiBi (p.mod, algo::HeadScoreModLog2) applied to every logit; false: the dense
  // kernel, whose code does not see p.mod.
  static constexpr bool kScoreMod = kScoreMod_;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kRowsPerWarp = kBlockM / kWarps;
  static_assert(kRowsPerWarp % 16 == 0, "each warp owns whole m16 tiles");
  static_assert(kBlockN % 16 == 0 && kHeadDim % 32 == 0);
  static constexpr int kMTiles = kRowsPerWarp / 16;  // m16 tiles per warp
  static constexpr int kSTiles = kBlockN / 8;        // n8 tiles of S per m16 tile
  static constexpr int kOTiles = kHeadDim / 8;       // n8 tiles of O per m16 tile
  using QTile = tile::SmemTile<kBlockM, kHeadDim>;
  using KvTile = tile::SmemTile<kBlockN, kHeadDim>;
  // Tensor-core instructions per warp per key block: S = Q K^T, then P V.
  static constexpr int kMmasPerStep = kMTiles * kSTiles * (kHeadDim / 16) + kMTiles * (kSTiles / 2) * kOTiles;
  // Up to d 192 the loop over head-dim steps of S = Q K^T is unrolled and the key blocks run in
  // four split loops (mask-free ones without the mask). At d 224 and 256 either spills on sm_90, so
  // there the head-dim loop is rolled by swizzle periods and the key blocks run through two bodies:
  // the tested one and the mask-free one (see the end of the kernel).
  static constexpr bool kUnrollHeadDim = kHeadDim <= 192;
  static constexpr bool kSplitLoops = kUnrollHeadDim;
  // The tensor-core instructions in the loop's machine code, where a rolled loop over head-dim
  // steps appears once (one swizzle period of them).
  static constexpr int kMmasInLoopCode =
      kMTiles * kSTiles * tile::kQktStepsInCode<QTile, kUnrollHeadDim> + kMTiles * (kSTiles / 2) * kOTiles;
  // Q, then K[2], then V[2] (double buffered).
  static constexpr std::size_t kSmemBytes = QTile::kBytes + 4 * KvTile::kBytes;
};

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) fa2_forward_kernel(Fa2ForwardParams p) {
  constexpr arch::MmaTag kTag = Traits::kTag;
  using QTile = typename Traits::QTile;
  using KvTile = typename Traits::KvTile;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN, kMTiles = Traits::kMTiles;
  constexpr int kSTiles = Traits::kSTiles, kOTiles = Traits::kOTiles, kThreads = Traits::kThreads;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  using D = algo::Domain<float>;
  const FlashShape& s = p.shape;

  const int m_block = static_cast<int>(blockIdx.x), batch = static_cast<int>(blockIdx.y);
  const int head = static_cast<int>(blockIdx.z), kv_head = head / (s.heads_q / s.heads_kv);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int first_row = m_block * kBlockM;
#if !defined(__CUDA_ARCH__)
  if (!p.wanted.any_row(s.heads_q, s.seqlen_q, batch, head, first_row, kBlockM)) return;  // partial launch
#endif
  // This head's soft cap and ALiBi slope (score-mod instantiations only).
  using Mod = std::conditional_t<Traits::kScoreMod, algo::HeadScoreModLog2, algo::NoScoreMod>;
  Mod mod{};
  if constexpr (Traits::kScoreMod) mod = p.mod.for_head(s.seqlen_q, s.seqlen_k, head);

  const algo::TileGeometry<int> g{kBlockM, kBlockN, s.seqlen_q, s.seqlen_k,
                                  {s.seqlen_k - s.seqlen_q, s.window_left, s.window_right}};
  const algo::BlockRange<int> keys = algo::key_blocks_for_query_block(g, m_block);
  const algo::BlockRange<int> seen = algo::keys_seen_by_any_row(g);

  std::uint16_t* q_s = dynamic_smem<std::uint16_t>();
  std::uint16_t* k_s = q_s + QTile::kRows * QTile::kCols;  // two buffers
  std::uint16_t* v_s = k_s + 2 * KvTile::kRows * KvTile::kCols;
  constexpr int kKvElements = KvTile::kRows * KvTile::kCols;

  // Keys no row sees are zero-filled: masked weights are 0, and 0 times what was there (NaN, say)
  // must not reach O.
  const auto load_kv = [&](int n_block, int buffer) {
    const int first_key = n_block * kBlockN, rows = seen.end - first_key, first = seen.begin - first_key;
    tile::copy_tile_async<KvTile, kThreads>(k_s + buffer * kKvElements, p.k.at(batch, first_key, kv_head),
                                            p.k.row_stride, rows, s.head_dim, tid, first);
    tile::copy_tile_async<KvTile, kThreads>(v_s + buffer * kKvElements, p.v.at(batch, first_key, kv_head),
                                            p.v.row_stride, rows, s.head_dim, tid, first);
  };
  // A mask-free block's keys are all in range and seen by some row, and head_dim fills the tile when
  // it equals the bucket: the copy needs no test.
  const bool full_head = s.head_dim == Traits::kHeadDim;
  const auto load_full_kv = [&](int n_block, int buffer) {
    const int first_key = n_block * kBlockN;
    tile::copy_full_tile_async<KvTile, kThreads>(k_s + buffer * kKvElements, p.k.at(batch, first_key, kv_head),
                                                 p.k.row_stride, tid);
    tile::copy_full_tile_async<KvTile, kThreads>(v_s + buffer * kKvElements, p.v.at(batch, first_key, kv_head),
                                                 p.v.row_stride, tid);
  };

  tile::copy_tile_async<QTile, kThreads>(q_s, p.q.at(batch, first_row, head), p.q.row_stride,
                                         s.seqlen_q - first_row, s.head_dim, tid);
  if (keys.begin < keys.end) load_kv(keys.begin, 0);
  arch::cp_async_commit();

  // Per lane: rows g and g + 8 of each of its m16 tiles ("half" 0 and 1); l is this lane's partial
  // row sum (its columns only), reduced over the 4 lanes of the row at the end.
  float row_max[kMTiles][2], row_sum[kMTiles][2];
  arch::MmaC acc[kMTiles][kOTiles];
  FP_UNROLL
  for (int mt = 0; mt < kMTiles; ++mt)
    FP_UNROLL
    for (int h = 0; h < 2; ++h) row_max[mt][h] = kNegInf, row_sum[mt][h] = 0.0f;
  tile::clear(acc);
  const int warp_row0 = warp * Traits::kRowsPerWarp;
  // Per-lane ldmatrix offsets, computed once (tile::LaneOffsets): the loop's loads add immediates.
  const auto q_lanes = tile::a_lane_offsets<QTile>(lane);
  const auto k_lanes = tile::b_pair_nk_lane_offsets<KvTile>(lane);
  const auto v_lanes = tile::a_lane_offsets<KvTile>(lane);

  // One key block. `masking` (tile::Masking) says how this body applies the mask: kMaskFree for the
  // blocks of mask_free_key_blocks (proved mask-free, so the body carries no per-logit test),
  // kMaskEvery for the rest of the split loops, mask_if(tile outside that range) in the two-body
  // loop of d 224 and 256. `next_full` (a std::bool_constant) says the next block is mask-free and
  // head_dim fills the bucket, so its copy needs no test either.
  const auto step = [&](int n_block, auto masking, auto next_full) {
    const int buffer = (n_block - keys.begin) % 2;
    if constexpr (decltype(next_full)::value) {
      load_full_kv(n_block + 1, 1 - buffer);  // overlaps this block's compute
      arch::cp_async_commit();
      arch::cp_async_wait<1>();
    } else if (n_block + 1 < keys.end) {
      load_kv(n_block + 1, 1 - buffer);
      arch::cp_async_commit();
      arch::cp_async_wait<1>();
    } else {
      arch::cp_async_wait<0>();
    }
    __syncthreads();
    const std::uint16_t* k_tile = k_s + buffer * kKvElements;
    const std::uint16_t* v_tile = v_s + buffer * kKvElements;

    // S = Q K^T for this warp's rows.
    arch::MmaC score[kMTiles][kSTiles];
    tile::clear(score);
    tile::add_q_kt<kTag, Traits::kUnrollHeadDim>(score, q_s, q_lanes, warp_row0, k_tile, k_lanes, 0);

    // Logits in log2 units, masked as `masking` says, then the FA2 step per row. With the mask
    // fixed at compile time each logit is folded into the row max as it is made (logit()), tested
    // with `&&` (with `&`, or as a pass before the max, d 32, 96, 160 and 192 need more registers).
    // The per-tile body (d 224, 256) masks the whole fragment first under one branch, with `&`
    // (selects): folded, its masked steps take 6% more instructions. Measured with nvcc 13, sm_90.
    constexpr bool kPerTile = decltype(masking)::kMode == tile::MaskMode::per_tile;
    constexpr algo::MaskTest kTest = kPerTile ? algo::MaskTest::all_tests : algo::MaskTest::short_circuit;
    const tile::FragmentMask<tile::ScoreLayout::rows_by_keys, kTest, Mod> mask(
        g.mask, s.seqlen_q, s.seqlen_k, s.scale_log2, lane, first_row + warp_row0, n_block * kBlockN, mod);
    if constexpr (kPerTile) mask.apply(score, masking);
    FP_UNROLL
    for (int mt = 0; mt < kMTiles; ++mt) {
      FP_UNROLL
      for (int h = 0; h < 2; ++h) {
        float block_max = kNegInf;
        FP_UNROLL
        for (int nt = 0; nt < kSTiles; ++nt) {
          FP_UNROLL
          for (int c = 0; c < 2; ++c) {
            float& x = score[mt][nt].reg[2 * h + c];
            if constexpr (!kPerTile) x = mask.logit(x, masking, mt, nt, 2 * h + c);
            block_max = D::max(block_max, x);
          }
        }
        block_max = D::max(block_max, arch::shfl_xor(block_max, 1));
        block_max = D::max(block_max, arch::shfl_xor(block_max, 2));
        const algo::Fa2Rescale<float> r = algo::fa2_rescale(row_max[mt][h], block_max);
        row_max[mt][h] = r.max;
        float block_sum = 0.0f;
        FP_UNROLL
        for (int nt = 0; nt < kSTiles; ++nt) {
          FP_UNROLL
          for (int c = 0; c < 2; ++c) {
            const float w = algo::shifted_exp2(score[mt][nt].reg[2 * h + c], r.offset);
            score[mt][nt].reg[2 * h + c] = w;
            block_sum += w;
          }
        }
        row_sum[mt][h] = algo::rescale_accumulate(row_sum[mt][h], r.factor, block_sum);
        // rescale_accumulate's rescale half (algo::rescale); the mma below adds the block's P V.
        FP_UNROLL
        for (int nt = 0; nt < kOTiles; ++nt)
          FP_UNROLL
          for (int c = 0; c < 2; ++c) acc[mt][nt].reg[2 * h + c] = algo::rescale(acc[mt][nt].reg[2 * h + c], r.factor);
      }
    }

    // acc += P V, P rounded to the input type as the A operand.
    tile::add_p_v<kTag>(acc, score, v_tile, v_lanes, 0);
    __syncthreads();  // every warp is done with this buffer before the next prefetch overwrites it
  };

  // The key blocks in order, the mask-free ones (a sub-range) through their own loop, whose last
  // block is peeled off: its successor may need the mask, and so the tested copy.
  const algo::BlockRange<int> free = algo::mask_free_key_blocks(g, m_block);
  const int free_begin = free.begin < keys.begin ? keys.begin : (free.begin > keys.end ? keys.end : free.begin);
  const int free_end = free.end < free_begin ? free_begin : (free.end > keys.end ? keys.end : free.end);
  const std::true_type full;
  const std::false_type tested;
  int n_block = keys.begin;
  if constexpr (Traits::kSplitLoops) {
    for (; n_block < free_begin; ++n_block) step(n_block, tile::kMaskEvery, tested);
    if (full_head)
      for (; n_block + 1 < free_end; ++n_block) step(n_block, tile::kMaskFree, full);
    for (; n_block < free_end; ++n_block) step(n_block, tile::kMaskFree, tested);
    for (; n_block < keys.end; ++n_block) step(n_block, tile::kMaskEvery, tested);
  } else {  // d 224, 256: four bodies would spill, so two. Each tile tests itself but in the run of
            // mask-free blocks (where head_dim fills the bucket), which goes through the lean body up
            // to its last block (whose successor may need the tested copy) and back to the tested one.
    const auto in_free_run = [&](int n) { return full_head && n >= free_begin && n + 1 < free_end; };
    while (n_block < keys.end) {
      for (; n_block < keys.end && !in_free_run(n_block); ++n_block)
        step(n_block, tile::mask_if(n_block < free_begin || n_block >= free_end), tested);
      for (; n_block < keys.end && in_free_run(n_block); ++n_block) step(n_block, tile::kMaskFree, full);
    }
  }
  arch::cp_async_wait<0>();  // the Q copy, when no key block was visited
  __syncthreads();            // ... and everyone's: the Q tile is reused for O below

  // Epilogue: l over the row's 4 lanes, O = acc / l rounded to the input type into this warp's own
  // rows of the Q tile (only this warp read them), LSE; then the warp stores those rows to global
  // memory in 16-byte chunks (whole 32-byte sectors instead of 4-byte pieces). Rows without a
  // visible key get 0 / +inf.
  std::uint16_t* o_s = q_s;
  const float ln2 = 0.693147180559945309f;
  FP_UNROLL
  for (int mt = 0; mt < kMTiles; ++mt) {
    FP_UNROLL
    for (int h = 0; h < 2; ++h) {
      float l = row_sum[mt][h];
      l += arch::shfl_xor(l, 1);
      l += arch::shfl_xor(l, 2);
      const algo::RowOutput<float> out = algo::finalize_row(row_max[mt][h], l, ln2);
      const int tile_row = warp_row0 + mt * 16 + arch::mma_c_element(lane, 2 * h).row;
      FP_UNROLL
      for (int nt = 0; nt < kOTiles; ++nt) {
        const int col = nt * 8 + arch::mma_c_element(lane, 2 * h).col;  // even
        const std::uint32_t pair = arch::pack_rounded<kTag>(D::mul(acc[mt][nt].reg[2 * h], out.inv_sum),
                                                            D::mul(acc[mt][nt].reg[2 * h + 1], out.inv_sum));
        arch::smem_store(reinterpret_cast<std::uint32_t*>(o_s + QTile::offset(tile_row, col)), pair);
      }
      const int row = first_row + tile_row;
      if (row < s.seqlen_q && lane % 4 == 0) p.lse[lse_index(s, batch, head, row)] = out.lse;
    }
  }
  arch::syncwarp();
  constexpr int kWarpChunks = Traits::kRowsPerWarp * QTile::kChunks;
  static_assert(kWarpChunks % 32 == 0);
  FP_UNROLL
  for (int j = 0; j < kWarpChunks / 32; ++j) {
    const int i = lane + 32 * j, r = warp_row0 + i / QTile::kChunks, chunk = i % QTile::kChunks;
    const int row = first_row + r;
    if (row < s.seqlen_q && chunk * 8 < s.head_dim)  // head_dim is a multiple of 8
      arch::global_store_16(p.o.at(batch, row, head) + chunk * 8,
                            arch::smem_load(reinterpret_cast<const arch::Chunk16*>(o_s + QTile::chunk_offset(r, chunk))));
  }
}

template <class Traits>
void launch_fa2_forward(const Fa2ForwardParams& p) {
  const Dim3 grid{static_cast<unsigned>((p.shape.seqlen_q + Traits::kBlockM - 1) / Traits::kBlockM),
                  static_cast<unsigned>(p.shape.batch), static_cast<unsigned>(p.shape.heads_q)};
  launch_kernel("fa2_forward", grid, Dim3{Traits::kThreads, 1, 1}, Traits::kSmemBytes, fa2_forward_kernel<Traits>,
                p);
}

}  // namespace flashproof::kernels::FP_TARGET
