// The FlashAttention-2 forward's decode path (docs/fa2.md "Decoding"): the forward over a KV cache,
// contiguous or paged, with its keys split between thread blocks (split-KV, Flash-Decoding) and a
// combine kernel. Its own kernel template (Fa2DecodeTraits), so the dense forward's machine code is
// untouched. Per thread block (query block, split; batch; head):
//   - the sequence's used length is read from target memory (KvCacheParams::seqlens) and the mask
//     aligned to it (bottom-right), exactly a dense problem of seqlen_k = used;
//   - the visited key blocks are algo::split_share(key_blocks_for_query_block, split_key_blocks(
//     blocks of the used length, splits, split)) (kernels/algo/split_kv.h, proved to cover every
//     visible block once);
//   - K and V rows are copied through the block table, one division per tile and one table read
//     per row for both tiles (tile::copy_row_pairs_async, algo::CacheWalk); rows past the used
//     length (and keys no row sees) are zero-filled, never read: unused slots and pages may hold NaN;
//   - with one split O and LSE are written as the dense forward writes them; with more, each split
//     writes its O normalised by its own l and algo::split_lse, and fa2_combine_kernel folds them in
//     split order with algo::split_state and merge_states and finalises with finalize_row.
// With appended keys fa2_append_kernel first writes them into the cache; the lengths the decode
// kernel reads are those after the append.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/algo/paged_kv.h"
#include "kernels/algo/split_kv.h"
#include "kernels/fa2/forward_kernel.h"

namespace flashproof::kernels::FP_TARGET {

template <int kHeadDim_, int kBlockM_, int kBlockN_, int kWarps_, arch::MmaTag kTag_>
struct Fa2DecodeTraits : Fa2ForwardTraits<kHeadDim_, kBlockM_, kBlockN_, kWarps_, kTag_> {};

// The decode tiles per head-dim bucket (docs/fa2.md "Decoding"): FlashAttention-2's split-KV tile,
// 64 query rows (4 warps of 16), 128 keys at d 64 and 64 at d 128 (each warp's S and O then match
// the dense forward's per warp).
template <int kBucket, arch::MmaTag kTag>
using Fa2DecodeTraitsFor = Fa2DecodeTraits<kBucket, 64, kBucket <= 64 ? 128 : 64, 4, kTag>;

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) fa2_decode_kernel(Fa2DecodeParams p) {
  constexpr arch::MmaTag kTag = Traits::kTag;
  using QTile = typename Traits::QTile;
  using KvTile = typename Traits::KvTile;
  constexpr int kBlockM = Traits::kBlockM, kBlockN = Traits::kBlockN, kMTiles = Traits::kMTiles;
  constexpr int kSTiles = Traits::kSTiles, kOTiles = Traits::kOTiles, kThreads = Traits::kThreads;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  using D = algo::Domain<float>;
  const FlashShape& s = p.shape;
  const KvCacheParams& c = p.cache;

  const int splits = c.num_splits;
  const int m_block = static_cast<int>(blockIdx.x) / splits, split = static_cast<int>(blockIdx.x) % splits;
  const int batch = static_cast<int>(blockIdx.y);
  const int head = static_cast<int>(blockIdx.z), kv_head = head / (s.heads_q / s.heads_kv);
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int first_row = m_block * kBlockM;

  // The keys this sequence uses (the flaw: the capacity, whose unused slots hold anything).
  const int used = (c.seqlens == nullptr ? s.seqlen_k : c.seqlens[batch]) -
                   (c.flaw == DecodeFlaw::keys_before_append ? c.seqlen_new : 0);
  const int seqlen_k = c.flaw == DecodeFlaw::page_from_allocated_length ? s.seqlen_k : used;
  const algo::TileGeometry<int> g{kBlockM, kBlockN, s.seqlen_q, seqlen_k,
                                  {seqlen_k - s.seqlen_q, s.window_left, s.window_right}};
  const algo::BlockRange<int> mine = algo::split_share(
      algo::key_blocks_for_query_block(g, m_block),
      algo::split_key_blocks(algo::ceil_div(seqlen_k, kBlockN), splits, split));
  const algo::BlockRange<int> keys{
      mine.begin, c.flaw == DecodeFlaw::split_skips_last_block && mine.end > mine.begin ? mine.end - 1 : mine.end};
  const algo::BlockRange<int> seen = algo::keys_seen_by_any_row(g);

  std::uint16_t* q_s = dynamic_smem<std::uint16_t>();
  std::uint16_t* k_s = q_s + QTile::kRows * QTile::kCols;  // two buffers
  std::uint16_t* v_s = k_s + 2 * KvTile::kRows * KvTile::kCols;
  constexpr int kKvElements = KvTile::kRows * KvTile::kCols;
  // A thread's rows of a K/V tile are kThreads / kChunks apart: at most 16, the smallest page, so
  // algo::CacheWalk wraps into the next page at most once per step.
  static_assert(kThreads / KvTile::kChunks <= 16);

  // K and V rows through the cache's layout; rows outside [seen.begin, seen.end) (past the used
  // length, or seen by no row) are zero-filled without forming their address.
  struct RowPair {
    const std::uint16_t* k;
    const std::uint16_t* v;
  };
  struct Walk {  // a thread's rows of a K/V tile: algo::CacheWalk and the two tensors' addresses
    algo::CacheWalk<int, std::int32_t> keys;
    const SeqTensor& k;
    const SeqTensor& v;
    int kv_head;
    FP_HOST_DEVICE void advance(int step) { keys.advance(step); }
    FP_HOST_DEVICE RowPair sources() const {
      const algo::CacheRow<int> at = keys.at();
      return {k.at(at.outer, at.row, kv_head), v.at(at.outer, at.row, kv_head)};
    }
  };
  const auto load_kv = [&](int n_block, int buffer) {
    const int first_key = n_block * kBlockN, rows = seen.end - first_key, first = seen.begin - first_key;
    const auto walk_from = [&](int r0) {
      return Walk{algo::CacheWalk<int, std::int32_t>::start(batch, first_key + r0, c.page_size, c.pages_per_sequence,
                                                           c.block_table),
                  p.k, p.v, kv_head};
    };
    tile::copy_row_pairs_async<KvTile, kThreads>(k_s + buffer * kKvElements, v_s + buffer * kKvElements, walk_from,
                                                 p.k.data, rows, s.head_dim, tid, first);
  };

  tile::copy_tile_async<QTile, kThreads>(q_s, p.q.at(batch, first_row, head), p.q.row_stride,
                                         s.seqlen_q - first_row, s.head_dim, tid);
  if (keys.begin < keys.end) load_kv(keys.begin, 0);
  arch::cp_async_commit();

  float row_max[kMTiles][2], row_sum[kMTiles][2];
  arch::MmaC acc[kMTiles][kOTiles];
  FP_UNROLL
  for (int mt = 0; mt < kMTiles; ++mt)
    FP_UNROLL
    for (int h = 0; h < 2; ++h) row_max[mt][h] = kNegInf, row_sum[mt][h] = 0.0f;
  tile::clear(acc);
  const int warp_row0 = warp * Traits::kRowsPerWarp;
  const auto q_lanes = tile::a_lane_offsets<QTile>(lane);
  const auto k_lanes = tile::b_pair_nk_lane_offsets<KvTile>(lane);
  const auto v_lanes = tile::a_lane_offsets<KvTile>(lane);

  // One key block, as the dense forward's step (forward_kernel.h) with the cache's copy.
  const auto step = [&](int n_block, auto masking) {
    const int buffer = (n_block - keys.begin) % 2;
    if (n_block + 1 < keys.end) {
      load_kv(n_block + 1, 1 - buffer);
      arch::cp_async_commit();
      arch::cp_async_wait<1>();
    } else {
      arch::cp_async_wait<0>();
    }
    __syncthreads();
    const std::uint16_t* k_tile = k_s + buffer * kKvElements;
    const std::uint16_t* v_tile = v_s + buffer * kKvElements;

    arch::MmaC score[kMTiles][kSTiles];
    tile::clear(score);
    tile::add_q_kt<kTag, Traits::kUnrollHeadDim>(score, q_s, q_lanes, warp_row0, k_tile, k_lanes, 0);

    const tile::FragmentMask<tile::ScoreLayout::rows_by_keys, algo::MaskTest::short_circuit> mask(
        g.mask, s.seqlen_q, seqlen_k, s.scale_log2, lane, first_row + warp_row0, n_block * kBlockN);
    FP_UNROLL
    for (int mt = 0; mt < kMTiles; ++mt) {
      FP_UNROLL
      for (int h = 0; h < 2; ++h) {
        float block_max = kNegInf;
        FP_UNROLL
        for (int nt = 0; nt < kSTiles; ++nt) {
          FP_UNROLL
          for (int cc = 0; cc < 2; ++cc) {
            float& x = score[mt][nt].reg[2 * h + cc];
            x = mask.logit(x, masking, mt, nt, 2 * h + cc);
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
          for (int cc = 0; cc < 2; ++cc) {
            const float w = algo::shifted_exp2(score[mt][nt].reg[2 * h + cc], r.offset);
            score[mt][nt].reg[2 * h + cc] = w;
            block_sum += w;
          }
        }
        row_sum[mt][h] = algo::rescale_accumulate(row_sum[mt][h], r.factor, block_sum);
        FP_UNROLL
        for (int nt = 0; nt < kOTiles; ++nt)
          FP_UNROLL
          for (int cc = 0; cc < 2; ++cc)
            acc[mt][nt].reg[2 * h + cc] = algo::rescale(acc[mt][nt].reg[2 * h + cc], r.factor);
      }
    }
    tile::add_p_v<kTag>(acc, score, v_tile, v_lanes, 0);
    __syncthreads();
  };

  // The split's blocks in order: masked ones, the mask-free run (algo::mask_free_key_blocks of the
  // used length's geometry), masked ones.
  const algo::BlockRange<int> free = algo::mask_free_key_blocks(g, m_block);
  const int free_begin = free.begin < keys.begin ? keys.begin : (free.begin > keys.end ? keys.end : free.begin);
  const int free_end = free.end < free_begin ? free_begin : (free.end > keys.end ? keys.end : free.end);
  int n_block = keys.begin;
  for (; n_block < free_begin; ++n_block) step(n_block, tile::kMaskEvery);
  for (; n_block < free_end; ++n_block) step(n_block, tile::kMaskFree);
  for (; n_block < keys.end; ++n_block) step(n_block, tile::kMaskEvery);
  arch::cp_async_wait<0>();
  __syncthreads();

  const float ln2 = 0.693147180559945309f;
  if (c.partial_o != nullptr) {
    // A split's partial result: O normalised by its own l (0 when it saw no key of the row) and its
    // LSE, -inf when empty (algo::split_lse), for the combine.
    FP_UNROLL
    for (int mt = 0; mt < kMTiles; ++mt) {
      FP_UNROLL
      for (int h = 0; h < 2; ++h) {
        float l = row_sum[mt][h];
        l += arch::shfl_xor(l, 1);
        l += arch::shfl_xor(l, 2);
        const float inv_sum = algo::finalize_row(row_max[mt][h], l, ln2).inv_sum;
        const int row = first_row + warp_row0 + mt * 16 + arch::mma_c_element(lane, 2 * h).row;
        if (row < s.seqlen_q) {
          const long long index = partial_index(s, split, batch, head, row);
          float* o_row = c.partial_o + index * s.head_dim;
          FP_UNROLL
          for (int nt = 0; nt < kOTiles; ++nt) {
            const int col = nt * 8 + arch::mma_c_element(lane, 2 * h).col;  // even
            if (col < s.head_dim) {
              o_row[col] = D::mul(acc[mt][nt].reg[2 * h], inv_sum);
              o_row[col + 1] = D::mul(acc[mt][nt].reg[2 * h + 1], inv_sum);
            }
          }
          if (lane % 4 == 0) c.partial_lse[index] = algo::split_lse(row_max[mt][h], l, ln2);
        }
      }
    }
    return;
  }

  // One split: the dense forward's epilogue (O through the Q tile, 16-byte stores; LSE).
  std::uint16_t* o_s = q_s;
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
        const int col = nt * 8 + arch::mma_c_element(lane, 2 * h).col;
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
    if (row < s.seqlen_q && chunk * 8 < s.head_dim)
      arch::global_store_16(p.o.at(batch, row, head) + chunk * 8,
                            arch::smem_load(reinterpret_cast<const arch::Chunk16*>(o_s + QTile::chunk_offset(r, chunk))));
  }
}

// The combine (num_splits > 1): one thread block per (query row, batch, head), each thread two
// adjacent columns. The splits' states are folded in split order with merge_states
// (kernels/algo/online_softmax.h) from algo::split_state (an empty split, LSE -inf, is the
// identity (-inf, 0)), acc = coef_a acc + coef_b O_s, then finalize_row: O = acc * inv_sum rounded
// to the input type, LSE; a row every split saw empty gets O = 0, LSE = +inf.
inline constexpr int kCombineThreads = 64;

template <arch::MmaTag kTag>
__global__ void __launch_bounds__(kCombineThreads) fa2_combine_kernel(Fa2DecodeParams p) {
  using D = algo::Domain<float>;
  const FlashShape& s = p.shape;
  const KvCacheParams& c = p.cache;
  const int row = static_cast<int>(blockIdx.x), batch = static_cast<int>(blockIdx.y);
  const int head = static_cast<int>(blockIdx.z), tid = static_cast<int>(threadIdx.x);
  if (c.flaw == DecodeFlaw::later_sequences_unwritten && batch > 0) return;
  const float log2e = 1.44269504088896340736f, ln2 = 0.693147180559945309f;
  for (int col = 2 * tid; col < s.head_dim; col += 2 * kCombineThreads) {
    float m = -std::numeric_limits<float>::infinity(), l = 0.0f, a0 = 0.0f, a1 = 0.0f;
    for (int split = 0; split < c.num_splits; ++split) {
      const long long index = partial_index(s, split, batch, head, row);
      const float lse = c.partial_lse[index];
      const algo::SplitState<float> st = algo::split_state(lse, log2e);
      algo::StateMerge<float> merged = algo::merge_states(m, l, st.max, st.sum);
      if (c.flaw == DecodeFlaw::combine_without_empty_guard) {  // the twin: no identity, no offset guard
        const float m_new = D::max(m, D::mul(lse, log2e));
        merged = {m_new, 0.0f, D::exp2(m - m_new), D::exp2(D::mul(lse, log2e) - m_new)};
        merged.sum = D::mul(merged.coef_a, l) + merged.coef_b;
      }
      const float* o_s = c.partial_o + index * s.head_dim + col;
      m = merged.max, l = merged.sum;
      a0 = D::mul(merged.coef_a, a0) + D::mul(merged.coef_b, o_s[0]);
      a1 = D::mul(merged.coef_a, a1) + D::mul(merged.coef_b, o_s[1]);
    }
    const algo::RowOutput<float> out = algo::finalize_row(m, l, ln2);
    *reinterpret_cast<std::uint32_t*>(p.o.at(batch, row, head) + col) =
        arch::pack_rounded<kTag>(D::mul(a0, out.inv_sum), D::mul(a1, out.inv_sum));
    if (col == 0) p.lse[lse_index(s, batch, head, row)] = out.lse;
  }
}

// The append (seqlen_new > 0), run before the decode kernel: one thread block per (new key t,
// batch), each thread 16-byte chunks of the key's rows over the KV heads, copied from k_new and
// v_new into the cache's slot seqlens[b] - seqlen_new + t through its layout (algo::cache_row).
// head_dim is a multiple of 8 (the API's staging), rows 16-byte aligned (validate.cpp). One
// instantiation for every bucket and dtype (a template only so that it stays in this header).
inline constexpr int kAppendThreads = 64;

template <int = 0>
__global__ void __launch_bounds__(kAppendThreads) fa2_append_kernel(Fa2DecodeParams p) {
  const FlashShape& s = p.shape;
  const KvCacheParams& c = p.cache;
  const int t = static_cast<int>(blockIdx.x), batch = static_cast<int>(blockIdx.y);
  const int key = c.seqlens[batch] - c.seqlen_new + t;
  const algo::CacheRow<int> at = algo::cache_row(batch, key, c.page_size, c.pages_per_sequence, c.block_table);
  const int chunks = s.head_dim / 8;
  for (int i = static_cast<int>(threadIdx.x); i < s.heads_kv * chunks; i += kAppendThreads) {
    const int head = i / chunks, col = (i % chunks) * 8;
    arch::global_store_16(p.k.at(at.outer, at.row, head) + col, arch::global_load_16(c.k_new.at(batch, t, head) + col));
    arch::global_store_16(p.v.at(at.outer, at.row, head) + col, arch::global_load_16(c.v_new.at(batch, t, head) + col));
  }
}

template <class Traits>
void launch_fa2_decode(const Fa2DecodeParams& p) {
  if (p.cache.seqlen_new > 0)
    launch_kernel("fa2_append", Dim3{static_cast<unsigned>(p.cache.seqlen_new), static_cast<unsigned>(p.shape.batch), 1},
                  Dim3{kAppendThreads, 1, 1}, 0, fa2_append_kernel<>, p);
  const unsigned m_blocks = static_cast<unsigned>((p.shape.seqlen_q + Traits::kBlockM - 1) / Traits::kBlockM);
  const Dim3 grid{m_blocks * static_cast<unsigned>(p.cache.num_splits), static_cast<unsigned>(p.shape.batch),
                  static_cast<unsigned>(p.shape.heads_q)};
  launch_kernel("fa2_decode", grid, Dim3{Traits::kThreads, 1, 1}, Traits::kSmemBytes, fa2_decode_kernel<Traits>, p);
  if (p.cache.partial_o != nullptr)
    launch_kernel("fa2_combine",
                  Dim3{static_cast<unsigned>(p.shape.seqlen_q), static_cast<unsigned>(p.shape.batch),
                       static_cast<unsigned>(p.shape.heads_q)},
                  Dim3{kCombineThreads, 1, 1}, 0, fa2_combine_kernel<Traits::kTag>, p);
}

}  // namespace flashproof::kernels::FP_TARGET
