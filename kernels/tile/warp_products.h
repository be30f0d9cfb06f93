// One warp's two products of the attention step, shared by the FA2 and FA1 forward kernels:
// S += Q K^T over the head dim and O += P V with P the rounded accumulators of S. Each warp owns
// kMTiles m16 tiles of rows and its n8 tiles of keys (S) or of the head dim (O).
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "kernels/arch/mma.h"
#include "kernels/loop_pragmas.h"
#include "kernels/tile/warp_fragments.h"

namespace flashproof::tile {

// add_q_kt's head-dim columns per loop trip, and its head-dim steps in the machine code (a rolled
// loop appears once).
template <class QTile, bool kUnrolled>
inline constexpr int kQktPeriod = kUnrolled ? QTile::kCols : QTile::kSwizzlePeriod;
template <class QTile, bool kUnrolled>
inline constexpr int kQktStepsInCode = kQktPeriod<QTile, kUnrolled> / 16;

// score[mt][nt] += Q rows q_row0 + 16 mt times K rows k_row0 + 8 nt, over QTile::kCols (the head
// dim), loads at the per-lane offsets plus immediates, K two n-tiles per ldmatrix.x4. kUnrolled:
// every head-dim step unrolled; otherwise a loop over swizzle periods (kSwizzle chunks), unrolled
// within one: a lane's offsets repeat every period, so the period's start moves the base pointers
// and the loads stay a register plus an immediate (fewer registers held than fully unrolled).
template <arch::MmaTag kTag, bool kUnrolled, class QTile, class KTile, int kMTiles, int kSTiles>
FP_HOST_DEVICE void add_q_kt(arch::MmaC (&score)[kMTiles][kSTiles], const std::uint16_t* q,
                             const LaneOffsets<QTile>& q_lanes, int q_row0, const std::uint16_t* k,
                             const LaneOffsets<KTile>& k_lanes, int k_row0) {
  static_assert(QTile::kCols == KTile::kCols && QTile::kSwizzle == KTile::kSwizzle && kSTiles % 2 == 0);
  constexpr int kPeriod = kQktPeriod<QTile, kUnrolled>;
  static_assert(QTile::kCols % kPeriod == 0);
  FP_ROLLED
  for (int p0 = 0; p0 < QTile::kCols; p0 += kPeriod) {
    FP_UNROLL
    for (int k0 = 0; k0 < kPeriod; k0 += 16) {
      arch::MmaA q_frag[kMTiles];
      FP_UNROLL
      for (int mt = 0; mt < kMTiles; ++mt) q_frag[mt] = load_a(q + p0, q_lanes, q_row0 + mt * 16, k0);
      FP_UNROLL
      for (int nt = 0; nt < kSTiles; nt += 2) {
        arch::MmaB k_frag[2];
        load_b_pair_from_nk(k + p0, k_lanes, k_row0 + nt * 8, k0, k_frag[0], k_frag[1]);
        FP_UNROLL
        for (int half = 0; half < 2; ++half)
          FP_UNROLL
          for (int mt = 0; mt < kMTiles; ++mt)
            score[mt][nt + half] = arch::mma_m16n8k16<kTag>(q_frag[mt], k_frag[half], score[mt][nt + half]);
      }
    }
  }
}

// out[mt][nt] += P V: P the accumulators `p` rounded to the input type (the A operand, two n8
// tiles of S per k16 step), V rows v_row0 + 16 kt, two n-tiles of the head dim per ldmatrix.x4.trans
// at the per-lane offsets.
template <arch::MmaTag kTag, class VTile, int kMTiles, int kSTiles, int kOTiles>
FP_HOST_DEVICE void add_p_v(arch::MmaC (&out)[kMTiles][kOTiles], const arch::MmaC (&p)[kMTiles][kSTiles],
                            const std::uint16_t* v, const LaneOffsets<VTile>& v_lanes, int v_row0) {
  static_assert(kSTiles % 2 == 0 && kOTiles % 2 == 0);
  FP_UNROLL
  for (int kt = 0; kt < kSTiles / 2; ++kt) {
    arch::MmaA p_frag[kMTiles];
    FP_UNROLL
    for (int mt = 0; mt < kMTiles; ++mt) p_frag[mt] = accumulators_as_a<kTag>(p[mt][2 * kt], p[mt][2 * kt + 1]);
    FP_UNROLL
    for (int nt = 0; nt < kOTiles; nt += 2) {
      arch::MmaB v_frag[2];
      load_b_pair_from_kn(v, v_lanes, nt * 8, v_row0 + kt * 16, v_frag[0], v_frag[1]);
      FP_UNROLL
      for (int half = 0; half < 2; ++half)
        FP_UNROLL
        for (int mt = 0; mt < kMTiles; ++mt)
          out[mt][nt + half] = arch::mma_m16n8k16<kTag>(p_frag[mt], v_frag[half], out[mt][nt + half]);
    }
  }
}

}  // namespace flashproof::tile
