// The backward pass shared by FA2 and FA1 (kernels/fa2/backward_kernel.h, kernels/fa1/backward_kernel.h):
// 1. preprocess: D = rowsum(dO * O) per query row (fp32), and dQ's fp32 accumulator zeroed;
// 2. backward_key_block, the work of one key block: K and V stay in shared memory while the query
//    blocks that see them stream through (kernels/algo/block_ranges.h), for every query head of the
//    group, so dK and dV sum over the group in registers. P is recomputed from the stored LSE
//    (kernels/algo/softmax_backward.h). Each warp owns 16 keys (and, for large head dims, half of
//    their head dim, FlashBackwardTraits::kDimSplit): S^T = K Q^T and dP^T = V dO^T, then
//    dV += P^T dO and dK += dS^T Q. dS^T goes through shared memory for dQ = dS K, which the warps
//    split by query rows and add to the fp32 accumulator (DqAccumulation). FA2 runs one key block
//    per thread block; FA1 runs them one after another in one thread block per (batch, kv head);
// 3. convert: dQ = scale * accumulator, rounded to the input type. With per-key-block slices it
//    sums the slices of exactly the key blocks that visit the row (the same block ranges, proved
//    consistent in both loop orders) in a fixed order.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/online_softmax.h"
#include "kernels/algo/softmax_backward.h"
#include "kernels/arch/atomic.h"
#include "kernels/arch/cp_async.h"
#include "kernels/arch/smem.h"
#include "kernels/flash/params.h"
#include "kernels/launch.h"
#include "kernels/tile/smem_tile.h"
#include "kernels/tile/tile_copy.h"
#include "kernels/tile/warp_fragments.h"

namespace flashproof::kernels::FP_TARGET {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, arch::MmaTag kTag_, bool kScoreMod_ = false>
struct FlashBackwardTraits {
  static constexpr int kHeadDim = kHeadDim_, kBlockM = kBlockM_, kBlockN = kBlockN_, kWarps = kWarps_;
  static constexpr arch::MmaTag kTag = kTag_;  // the input type: one tensor-core instruction kind
  // The soft cap and ALiBi (p.mod) in the recomputed logits and dS (FA2's score-mod instantiations);
  // false: the dense backward, whose code does not see p.mod.
  static constexpr bool kScoreMod = kScoreMod_;
  // The preprocess and convert kernels do not depend on the score mod: one instantiation serves both.
  using HelperTraits = FlashBackwardTraits<kHeadDim_, kBlockM_, kBlockN_, kWarps_, kTag_, false>;
  static constexpr int kThreads = kWarps * 32;
  // Each warp owns 16 keys and 1 / kDimSplit of the head dim of their dK and dV. With kDimSplit 2
  // (large head dims, where a whole 16 x head_dim dK and dV would not fit in registers) the two
  // warps of a key group split S^T and dP^T by query columns and share P^T and dS^T through shared
  // memory; with 1, P^T and dS^T stay in registers.
  static constexpr int kKeyWarps = kBlockN / 16;
  static constexpr int kDimSplit = kWarps / kKeyWarps;
  static_assert(kBlockN % 16 == 0 && kKeyWarps * kDimSplit == kWarps && (kDimSplit == 1 || kDimSplit == 2),
                "each warp owns 16 keys and one or two halves of the head dim");
  static_assert(kBlockM % 32 == 0 && kHeadDim % 32 == 0);
  static constexpr int kQTiles = kBlockM / 8;   // n8 tiles of S^T per key group
  static constexpr int kOTiles = kHeadDim / 8;  // n8 tiles of dK, dV, dQ
  static constexpr int kWarpQTiles = kQTiles / kDimSplit;  // ... of S^T per warp
  static constexpr int kWarpOTiles = kOTiles / kDimSplit;  // ... of dK, dV per warp
  static_assert(kWarpQTiles % 2 == 0 && kOTiles % kDimSplit == 0);
  // dQ = dS K: (kBlockM / 16) m16 tiles, each split into kDqSplit column ranges, over the warps.
  static constexpr int kDqSplit = kWarps > kBlockM / 16 ? kWarps / (kBlockM / 16) : 1;
  static_assert(kOTiles % kDqSplit == 0);
  static constexpr int kDqItems = (kBlockM / 16) * kDqSplit;
  // Tensor-core instructions per query block for the busiest warp: S^T and dP^T, dV and dK, and its
  // share of dQ (items warp, warp + kWarps, ...).
  static constexpr int kMmasPerStep = 2 * kWarpQTiles * (kHeadDim / 16) + 2 * (kQTiles / 2) * kWarpOTiles +
                                      (kDqItems + kWarps - 1) / kWarps * (kBlockN / 16) * (kOTiles / kDqSplit);
  using KvTile = tile::SmemTile<kBlockN, kHeadDim>;
  using QTile = tile::SmemTile<kBlockM, kHeadDim>;
  // S^T and dP^T's head-dim loop: rolled by swizzle periods with loads at per-lane offsets, or
  // (kOffsetLoads false) by k16 steps computing each address. The former spills 32 bytes on sm_90
  // at d 128 with 128-key blocks (FA2's shipped shape; measured), so that shape keeps the latter.
  static constexpr bool kOffsetLoads = !(kHeadDim == 128 && kBlockN == 128);
  static constexpr int kSTPeriod = kOffsetLoads ? KvTile::kSwizzlePeriod : 16;  // head-dim columns per trip
  static_assert(QTile::kSwizzle == KvTile::kSwizzle && kHeadDim % kSTPeriod == 0);
  // ... and in the loop's machine code, where the rolled loops (head-dim trips of S^T and dP^T,
  // dQ's key steps and, with kDimSplit 2, the query steps of dV and dK) appear once.
  static constexpr int kMmasInLoopCode =
      2 * kWarpQTiles * (kSTPeriod / 16) + (kDimSplit == 1 ? kQTiles : 2) * kWarpOTiles + kOTiles / kDqSplit;
  using DsTile = tile::SmemTile<kBlockN, kBlockM>;  // dS^T and P^T, [key][query]
  // K, V, Q, dO, dS^T, P^T (kDimSplit 2 only), then LSE (log2 units) and D per query row of the block.
  static constexpr std::size_t kSmemBytes = 2 * KvTile::kBytes + 2 * QTile::kBytes +
                                            (kDimSplit == 1 ? 1 : 2) * DsTile::kBytes + 2 * sizeof(float) * kBlockM;
};

inline constexpr int kRowKernelThreads = 128;

FP_HOST_DEVICE inline float* dq_accum_row(const FlashBackwardParams& p, int split, int batch, int row, int head) {
  const FlashShape& s = p.shape;
  return p.dq_accum +
         (((static_cast<long long>(split) * s.batch + batch) * s.seqlen_q + row) * s.heads_q + head) * s.head_dim;
}

// Grid (ceil(seqlen_q / 128), batch, heads_q), one thread per query row.
template <class Traits>  // for its input type (and so that FA1 and FA2 can both include it)
__global__ void backward_preprocess_kernel(FlashBackwardParams p) {
  constexpr arch::MmaTag kTag = Traits::kTag;
  const FlashShape& s = p.shape;
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int batch = static_cast<int>(blockIdx.y), head = static_cast<int>(blockIdx.z);
  if (row >= s.seqlen_q) return;
  const std::uint16_t* o = p.o.at(batch, row, head);
  const std::uint16_t* dout = p.dout.at(batch, row, head);
  float dot = 0.0f;
  for (int c = 0; c < s.head_dim; ++c)
    dot = algo::row_dot_step(dot, arch::bits16_to_float<kTag>(dout[c]), arch::bits16_to_float<kTag>(o[c]));
  p.row_dot[lse_index(s, batch, head, row)] = dot;
  if (p.dq_mode != DqAccumulation::slices) {
    float* accum = dq_accum_row(p, 0, batch, row, head);
    for (int c = 0; c < s.head_dim; ++c) accum[c] = 0.0f;
  }
}

// One key block's share of the backward, run by one thread block: K and V of key block n_block
// stay in shared memory while the query blocks that see it stream through, for every query head of
// kv_head's group; dK and dV (summed over the group in registers) are written at the end, and dQ's
// contributions go to the accumulator as p.dq_mode says. Leaves no copy in flight; callers that run
// it again in the same block separate the calls with a barrier.
template <class Traits>
__device__ void backward_key_block(const FlashBackwardParams& p, int batch, int kv_head, int n_block) {
  constexpr arch::MmaTag kTag = Traits::kTag;
  using KvTile = typename Traits::KvTile;
  using QTile = typename Traits::QTile;
  using DsTile = typename Traits::DsTile;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN, kThreads = Traits::kThreads;
  constexpr int kQTiles = Traits::kQTiles, kWarpQTiles = Traits::kWarpQTiles, kWarpOTiles = Traits::kWarpOTiles;
  constexpr bool kShared = Traits::kDimSplit > 1;  // P^T and dS^T through shared memory
  constexpr float kInf = std::numeric_limits<float>::infinity();
  using D = algo::Domain<float>;
  const FlashShape& s = p.shape;

  const int group = s.heads_q / s.heads_kv;
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int first_key = n_block * kBlockN, warp_key0 = (warp % Traits::kKeyWarps) * 16;
  const int half = kShared ? warp / Traits::kKeyWarps : 0;  // query columns of S^T, head-dim tiles of dK, dV
  const int q_tile0 = half * kWarpQTiles, o_tile0 = half * kWarpOTiles;

  const algo::TileGeometry<int> g{kBlockM, kBlockN, s.seqlen_q, s.seqlen_k,
                                  {s.seqlen_k - s.seqlen_q, s.window_left, s.window_right}};
  const algo::BlockRange<int> queries = algo::query_blocks_for_key_block(g, n_block);
#if !defined(__CUDA_ARCH__)
  // Partial launch: a key block with no wanted key visits only the query blocks with a wanted row.
  const bool keys_wanted = p.wanted.any_col(s.heads_kv, s.seqlen_k, batch, kv_head, first_key, kBlockN);
#endif

  std::uint16_t* k_s = dynamic_smem<std::uint16_t>();
  std::uint16_t* v_s = k_s + KvTile::kRows * KvTile::kCols;
  std::uint16_t* q_s = v_s + KvTile::kRows * KvTile::kCols;
  std::uint16_t* do_s = q_s + QTile::kRows * QTile::kCols;
  std::uint16_t* ds_s = do_s + QTile::kRows * QTile::kCols;
  std::uint16_t* p_s = ds_s + DsTile::kRows * DsTile::kCols;  // P^T, used when kShared
  float* lse_s = reinterpret_cast<float*>(p_s + (kShared ? DsTile::kRows * DsTile::kCols : 0));
  float* dot_s = lse_s + kBlockM;

  // Keys no row sees are zero-filled, so whatever lies there (NaN, say) cannot reach dQ or dK/dV
  // through a zero weight; their dK and dV come out 0.
  const algo::BlockRange<int> seen = algo::keys_seen_by_any_row(g);
  tile::copy_tile_async<KvTile, kThreads>(k_s, p.k.at(batch, first_key, kv_head), p.k.row_stride,
                                          seen.end - first_key, s.head_dim, tid, seen.begin - first_key);
  tile::copy_tile_async<KvTile, kThreads>(v_s, p.v.at(batch, first_key, kv_head), p.v.row_stride,
                                          seen.end - first_key, s.head_dim, tid, seen.begin - first_key);
  arch::cp_async_commit();

  arch::MmaC acc_dk[kWarpOTiles], acc_dv[kWarpOTiles];  // head-dim tiles o_tile0 + 0, 1, ...
  tile::clear(acc_dk);
  tile::clear(acc_dv);
  const float log2e = 1.44269504088896340736f;
  const auto kv_lanes = tile::a_lane_offsets<KvTile>(lane);          // K and V as A operands
  const auto q_lanes = tile::b_pair_nk_lane_offsets<QTile>(lane);    // Q and dO, two n-tiles per load

  for (int member = 0; member < group; ++member) {
    const int head = kv_head * group + member;
    // This head's soft cap and ALiBi slope (score-mod instantiations only).
    using Mod = std::conditional_t<Traits::kScoreMod, algo::HeadScoreModLog2, algo::NoScoreMod>;
    [[maybe_unused]] Mod mod{};
    if constexpr (Traits::kScoreMod) mod = p.mod.for_head(s.seqlen_q, s.seqlen_k, head);
    for (int m_block = queries.begin; m_block < queries.end; ++m_block) {
      const int first_row = m_block * kBlockM;
#if !defined(__CUDA_ARCH__)
      if (!keys_wanted && !p.wanted.any_row(s.heads_q, s.seqlen_q, batch, head, first_row, kBlockM)) continue;
#endif
      tile::copy_tile_async<QTile, kThreads>(q_s, p.q.at(batch, first_row, head), p.q.row_stride,
                                             s.seqlen_q - first_row, s.head_dim, tid);
      tile::copy_tile_async<QTile, kThreads>(do_s, p.dout.at(batch, first_row, head), p.dout.row_stride,
                                             s.seqlen_q - first_row, s.head_dim, tid);
      arch::cp_async_commit();
      for (int i = tid; i < kBlockM; i += kThreads) {
        const int row = first_row + i;
        const bool valid = row < s.seqlen_q;
        const long long at = lse_index(s, batch, head, valid ? row : 0);
        // Rows past the end: LSE +inf makes P = 0 there.
        arch::smem_store(lse_s + i, valid ? algo::lse_log2(p.lse[at], log2e) : kInf);
        arch::smem_store(dot_s + i, valid ? p.row_dot[at] : 0.0f);
      }
      arch::cp_async_wait<0>();
      __syncthreads();

      // S^T = K Q^T and dP^T = V dO^T for this warp's 16 keys and query tiles q_tile0 + 0, 1, ...
      arch::MmaC score[kWarpQTiles], dprob[kWarpQTiles];
      tile::clear(score);
      tile::clear(dprob);
      if constexpr (Traits::kOffsetLoads) {
        // Rolled by swizzle periods, unrolled within one: a lane's ldmatrix offsets repeat every
        // period, so the loads are a register plus an immediate (as in tile::add_q_kt).
        constexpr int kPeriod = Traits::kSTPeriod;
        FP_ROLLED
        for (int p0 = 0; p0 < Traits::kHeadDim; p0 += kPeriod) {
          FP_UNROLL
          for (int k0 = 0; k0 < kPeriod; k0 += 16) {
            const arch::MmaA k_frag = tile::load_a(k_s + p0, kv_lanes, warp_key0, k0);
            const arch::MmaA v_frag = tile::load_a(v_s + p0, kv_lanes, warp_key0, k0);
            FP_UNROLL
            for (int nt = 0; nt < kWarpQTiles; nt += 2) {
              const int n0 = (q_tile0 + nt) * 8;
              arch::MmaB q_frag[2], do_frag[2];
              tile::load_b_pair_from_nk(q_s + p0, q_lanes, n0, k0, q_frag[0], q_frag[1]);
              tile::load_b_pair_from_nk(do_s + p0, q_lanes, n0, k0, do_frag[0], do_frag[1]);
              FP_UNROLL
              for (int h = 0; h < 2; ++h) {
                score[nt + h] = arch::mma_m16n8k16<kTag>(k_frag, q_frag[h], score[nt + h]);
                dprob[nt + h] = arch::mma_m16n8k16<kTag>(v_frag, do_frag[h], dprob[nt + h]);
              }
            }
          }
        }
      } else {
        FP_ROLLED
        for (int k0 = 0; k0 < Traits::kHeadDim; k0 += 16) {
          const arch::MmaA k_frag = tile::load_a<KvTile>(k_s, warp_key0, k0, lane);
          const arch::MmaA v_frag = tile::load_a<KvTile>(v_s, warp_key0, k0, lane);
          FP_UNROLL
          for (int nt = 0; nt < kWarpQTiles; ++nt) {
            const int n0 = (q_tile0 + nt) * 8;
            score[nt] = arch::mma_m16n8k16<kTag>(k_frag, tile::load_b_from_nk<QTile>(q_s, n0, k0, lane), score[nt]);
            dprob[nt] = arch::mma_m16n8k16<kTag>(v_frag, tile::load_b_from_nk<QTile>(do_s, n0, k0, lane), dprob[nt]);
          }
        }
      }

      // P^T recomputed from the LSE, dS^T = P^T * (dP^T - D); masked pairs get P = 0, dS = 0. The mask
      // is algo::pair_kept, with the per-tile rule tile_needs_no_mask, spelled here rather than
      // through tile::FragmentMask: every way through it measured on sm_90 (logit() or keeps(),
      // `&&` or `&`, the lengths and the scale by value or by reference) makes FA2's d 128 spill at
      // 255 registers (budget 247, no spill), though it saves FA1's d 128 up to 1% of instructions.
      // In the score-mod instantiations the logit is modified as in the forward (the same
      // algo::HeadScoreModLog2, so bitwise the forward's logit) and, when capped, dS is then
      // multiplied by the cap's derivative, t the same tanh value: dS' = fl(dS * fl(1 - fl(t * t))).
      const bool needs_mask = !algo::tile_needs_no_mask(g, m_block, n_block);
      FP_UNROLL
      for (int nt = 0; nt < kWarpQTiles; ++nt) {
        FP_UNROLL
        for (int i = 0; i < 4; ++i) {
          const arch::MatrixCoord at = arch::mma_c_element(lane, i);
          const int key = first_key + warp_key0 + at.row, local_row = (q_tile0 + nt) * 8 + at.col;
          const int row = first_row + local_row;
          float x = algo::scaled_logit(score[nt].reg[i], s.scale_log2);
          [[maybe_unused]] float t = 0.0f;  // the cap's tanh
          if constexpr (Traits::kScoreMod) x = mod(x, row, key, t);
          if (needs_mask && !algo::pair_kept(g.mask, s.seqlen_q, s.seqlen_k, row, key)) x = -kInf;
          const float prob = algo::recompute_prob(x, arch::smem_load(lse_s + local_row));
          score[nt].reg[i] = prob;
          dprob[nt].reg[i] = algo::softmax_grad(prob, dprob[nt].reg[i], arch::smem_load(dot_s + local_row));
          if constexpr (Traits::kScoreMod)
            if (mod.capped() && p.mod.cap_derivative)
              dprob[nt].reg[i] = D::mul(dprob[nt].reg[i], algo::soft_cap_derivative(t));
        }
      }

      // dV += P^T dO and dK += dS^T Q over the query rows in k16 steps, P^T and dS^T rounded to the
      // input type: from this warp's registers, or (kShared) from shared memory, where both warps
      // of the key group have put their query columns. The same products in the same order.
      if constexpr (!kShared) {
        FP_UNROLL
        for (int kt = 0; kt < kQTiles / 2; ++kt) {
          const arch::MmaA p_frag = tile::accumulators_as_a<kTag>(score[2 * kt], score[2 * kt + 1]);
          const arch::MmaA ds_frag = tile::accumulators_as_a<kTag>(dprob[2 * kt], dprob[2 * kt + 1]);
          FP_UNROLL
          for (int nt = 0; nt < kWarpOTiles; ++nt) {
            acc_dv[nt] = arch::mma_m16n8k16<kTag>(p_frag, tile::load_b_from_kn<QTile>(do_s, nt * 8, kt * 16, lane), acc_dv[nt]);
            acc_dk[nt] = arch::mma_m16n8k16<kTag>(ds_frag, tile::load_b_from_kn<QTile>(q_s, nt * 8, kt * 16, lane), acc_dk[nt]);
          }
        }
      }

      // dS^T (and, kShared, P^T) to shared memory, rounded as in the products, for dQ.
      FP_UNROLL
      for (int nt = 0; nt < kWarpQTiles; ++nt) {
        FP_UNROLL
        for (int h = 0; h < 2; ++h) {
          const arch::MatrixCoord at = arch::mma_c_element(lane, 2 * h);
          const int offset = DsTile::offset(warp_key0 + at.row, (q_tile0 + nt) * 8 + at.col);
          arch::smem_store(reinterpret_cast<std::uint32_t*>(ds_s + offset),
                           arch::pack_rounded<kTag>(dprob[nt].reg[2 * h], dprob[nt].reg[2 * h + 1]));
          if constexpr (kShared)
            arch::smem_store(reinterpret_cast<std::uint32_t*>(p_s + offset),
                             arch::pack_rounded<kTag>(score[nt].reg[2 * h], score[nt].reg[2 * h + 1]));
        }
      }
      __syncthreads();

      if constexpr (kShared) {
        FP_ROLLED
        for (int kt = 0; kt < kQTiles / 2; ++kt) {
          const arch::MmaA p_frag = tile::load_a<DsTile>(p_s, warp_key0, kt * 16, lane);
          const arch::MmaA ds_frag = tile::load_a<DsTile>(ds_s, warp_key0, kt * 16, lane);
          FP_UNROLL
          for (int nt = 0; nt < kWarpOTiles; ++nt) {
            const int n0 = (o_tile0 + nt) * 8;
            acc_dv[nt] = arch::mma_m16n8k16<kTag>(p_frag, tile::load_b_from_kn<QTile>(do_s, n0, kt * 16, lane), acc_dv[nt]);
            acc_dk[nt] = arch::mma_m16n8k16<kTag>(ds_frag, tile::load_b_from_kn<QTile>(q_s, n0, kt * 16, lane), acc_dk[nt]);
          }
        }
      }

      // dQ (unscaled) += dS K for this block's keys.
      constexpr int kTilesPerItem = Traits::kOTiles / Traits::kDqSplit;
      const int split = p.dq_mode == DqAccumulation::slices ? n_block : 0;
      for (int item = warp; item < Traits::kDqItems; item += Traits::kWarps) {
        const int mt = item / Traits::kDqSplit, nt0 = (item % Traits::kDqSplit) * kTilesPerItem;
        arch::MmaC dq[kTilesPerItem];
        tile::clear(dq);
        FP_ROLLED
        for (int kt = 0; kt < kBlockN / 16; ++kt) {
          const arch::MmaA ds_frag = tile::load_a_transposed<DsTile>(ds_s, mt * 16, kt * 16, lane);
          FP_UNROLL
          for (int j = 0; j < kTilesPerItem; ++j)
            dq[j] = arch::mma_m16n8k16<kTag>(ds_frag, tile::load_b_from_kn<KvTile>(k_s, (nt0 + j) * 8, kt * 16, lane), dq[j]);
        }
        FP_UNROLL
        for (int i = 0; i < 4; ++i) {
          const arch::MatrixCoord at = arch::mma_c_element(lane, i);
          const int row = first_row + mt * 16 + at.row;
          if (row >= s.seqlen_q) continue;
          float* accum = dq_accum_row(p, split, batch, row, head);
          FP_UNROLL
          for (int j = 0; j < kTilesPerItem; ++j) {
            const int col = (nt0 + j) * 8 + at.col;
            if (col >= s.head_dim) continue;
            switch (p.dq_mode) {
              case DqAccumulation::atomic: arch::atomic_add(accum + col, dq[j].reg[i]); break;
              case DqAccumulation::slices: accum[col] = dq[j].reg[i]; break;
              case DqAccumulation::owned: accum[col] += dq[j].reg[i]; break;  // this thread's element
            }
          }
        }
      }
      __syncthreads();  // Q, dO, dS^T, P^T, LSE and D are overwritten by the next query block
    }
  }
  arch::cp_async_wait<0>();  // the K/V copy, when no query block was visited

  FP_UNROLL
  for (int nt = 0; nt < kWarpOTiles; ++nt) {
    FP_UNROLL
    for (int i = 0; i < 4; ++i) {
      const arch::MatrixCoord at = arch::mma_c_element(lane, i);
      const int key = first_key + warp_key0 + at.row, col = (o_tile0 + nt) * 8 + at.col;
      if (key >= s.seqlen_k || col >= s.head_dim) continue;
      p.dk.at(batch, key, kv_head)[col] = arch::float_to_bits16<kTag>(D::mul(acc_dk[nt].reg[i], s.softmax_scale));
      p.dv.at(batch, key, kv_head)[col] = arch::float_to_bits16<kTag>(acc_dv[nt].reg[i]);
    }
  }
}

// Grid (ceil(seqlen_q / 128), batch, heads_q), one thread per query row. The tile shape is the main
// kernel's: in deterministic mode it names the slices that hold a row's contributions.
template <class Traits>
__global__ void backward_convert_kernel(FlashBackwardParams p) {
  constexpr arch::MmaTag kTag = Traits::kTag;
  const FlashShape& s = p.shape;
  const int row = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int batch = static_cast<int>(blockIdx.y), head = static_cast<int>(blockIdx.z);
  if (row >= s.seqlen_q) return;
#if !defined(__CUDA_ARCH__)
  if (!p.wanted.any_row(s.heads_q, s.seqlen_q, batch, head, row, 1)) return;  // partial launch: dQ unwritten
#endif
  algo::BlockRange<int> splits{0, 1};
  if (p.dq_mode == DqAccumulation::slices) {
    const algo::TileGeometry<int> g{Traits::kBlockM, Traits::kBlockN, s.seqlen_q, s.seqlen_k,
                                    {s.seqlen_k - s.seqlen_q, s.window_left, s.window_right}};
    splits = algo::key_blocks_for_query_block(g, row / Traits::kBlockM);
  }
  std::uint16_t* dq = p.dq.at(batch, row, head);
  for (int c = 0; c < s.head_dim; ++c) {
    float sum = 0.0f;
    for (int split = splits.begin; split < splits.end; ++split) sum += dq_accum_row(p, split, batch, row, head)[c];
    dq[c] = arch::float_to_bits16<kTag>(algo::Domain<float>::mul(sum, s.softmax_scale));
  }
}

// Runs preprocess, the main kernel (grid and kernel given by the caller) and convert.
template <class Traits>
void launch_backward(const FlashBackwardParams& p, const char* main_name, Dim3 main_grid,
                     void (*main_kernel)(FlashBackwardParams)) {
  const FlashShape& s = p.shape;
  const Dim3 rows_grid{static_cast<unsigned>((s.seqlen_q + kRowKernelThreads - 1) / kRowKernelThreads),
                       static_cast<unsigned>(s.batch), static_cast<unsigned>(s.heads_q)};
  const Dim3 row_block{kRowKernelThreads, 1, 1};
  // A sequence of a packed batch (run alone, docs/fa2.md "Packed batches") may have no query row or
  // no key: a grid without blocks is not launched (its kernel has nothing to do; dQ = 0 and dK =
  // dV = 0 come from the others).
  using Helper = typename Traits::HelperTraits;  // Traits itself unless a score-mod instantiation
  if (rows_grid.x > 0) launch_kernel("backward_preprocess", rows_grid, row_block, 0, backward_preprocess_kernel<Helper>, p);
  if (main_grid.x > 0) launch_kernel(main_name, main_grid, Dim3{Traits::kThreads, 1, 1}, Traits::kSmemBytes, main_kernel, p);
  if (rows_grid.x > 0) launch_kernel("backward_convert", rows_grid, row_block, 0, backward_convert_kernel<Helper>, p);
}

}  // namespace flashproof::kernels::FP_TARGET
