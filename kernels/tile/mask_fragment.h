// The mask applied to a register fragment of S (or S^T): FragmentMask turns a product into its
// logit, scaled to log2 units (algo::scaled_logit) and -inf where the mask hides the pair
// (algo::pair_kept, the mask's one spelling). A per-element transform of the logits (FlexAttention's
// score_mod) is applied in FragmentMask::scaled, before the mask: the soft cap and ALiBi
// (algo::HeadScoreModLog2, the Mod parameter; algo::NoScoreMod, the dense kernels', adds nothing). Which tiles
// need the mask is not decided here but by algo/block_ranges.h (proved); the caller
// passes the outcome as a Masking, whose mode (none / every / per_tile) is the one parameter of
// how a body applies it.
#pragma once

#include <limits>

#include "core/host_device.h"
#include "kernels/algo/mask.h"
#include "kernels/algo/online_softmax.h"
#include "kernels/algo/score_mod.h"
#include "kernels/arch/mma.h"
#include "kernels/loop_pragmas.h"

namespace flashproof::tile {

// How a kernel body applies the mask to the tiles it runs.
enum class MaskMode {
  none,      // compile time: the body runs mask-free tiles only (proved); its code holds no test
  every,     // compile time: every tile through the body is tested logit by logit
  per_tile,  // run time: a flag per tile; one branch around the whole tested pass
};

template <MaskMode kMode_>
struct Masking {
  static constexpr MaskMode kMode = kMode_;
  bool tile_needs_mask = kMode_ == MaskMode::every;  // read in per_tile mode only
  FP_HOST_DEVICE constexpr bool applies() const {
    if constexpr (kMode == MaskMode::per_tile)
      return tile_needs_mask;
    else
      return kMode == MaskMode::every;
  }
};
inline constexpr Masking<MaskMode::none> kMaskFree{};
inline constexpr Masking<MaskMode::every> kMaskEvery{};
FP_HOST_DEVICE constexpr Masking<MaskMode::per_tile> mask_if(bool tile_needs_mask) { return {tile_needs_mask}; }

// Where the query rows run in a fragment: S is rows by keys (the forwards), S^T keys by rows (the
// backward). Either way the fragment is m16n8 tiles of fp32 accumulators, tile (mt, nt) holding
// fragment rows 16 mt.. and columns 8 nt.. (a 1-D fragment is mt 0).
enum class ScoreLayout { rows_by_keys, keys_by_rows };

// The mask of one S (or S^T) fragment whose element (0, 0) is the pair (first_row, first_key).
// logit() is the application, one element at a time, so that a kernel can fold it into the loop
// that consumes the logits; apply() is the same over a whole fragment in two passes. kTest is
// pair_kept's `&&` / `&` (same values; each kernel uses the one its register and instruction
// budgets were measured with on sm_90). The window and the lengths are held by reference, so that
// the kernels read the lengths from their parameters, as before the seam (read from a local copy,
// the FA1 forward at d 256 needs 242 registers, not 240, and FA2's masked steps move). `Mod` is the
// score modification of the fragment's head (algo::HeadScoreModLog2), or algo::NoScoreMod, whose
// code is the dense kernels' unchanged.
template <ScoreLayout kLayout, algo::MaskTest kTest, class Mod = algo::NoScoreMod>
class FragmentMask {
 public:
  FP_HOST_DEVICE FragmentMask(const algo::WindowMask<int>& window, const int& seqlen_q, const int& seqlen_k,
                              float scale_log2, int lane, int first_row, int first_key, Mod mod = {})
      : window_(window), seqlen_q_(seqlen_q), seqlen_k_(seqlen_k), scale_log2_(scale_log2), lane_(lane),
        first_row_(first_row), first_key_(first_key), mod_(mod) {}

  // The query row and key of element i of tile (mt, nt).
  FP_HOST_DEVICE int row(int mt, int nt, int i) const {
    const arch::MatrixCoord at = arch::mma_c_element(lane_, i);
    return first_row_ + (kLayout == ScoreLayout::rows_by_keys ? mt * 16 + at.row : nt * 8 + at.col);
  }
  FP_HOST_DEVICE int key(int mt, int nt, int i) const {
    const arch::MatrixCoord at = arch::mma_c_element(lane_, i);
    return first_key_ + (kLayout == ScoreLayout::rows_by_keys ? nt * 8 + at.col : mt * 16 + at.row);
  }

  // Is the pair of element i of tile (mt, nt) kept (algo::pair_kept)?
  FP_HOST_DEVICE bool keeps(int mt, int nt, int i) const {
    const arch::MatrixCoord at = arch::mma_c_element(lane_, i);
    const int r = mt * 16 + at.row, c = nt * 8 + at.col;
    const int row = first_row_ + (kLayout == ScoreLayout::rows_by_keys ? r : c);
    const int key = first_key_ + (kLayout == ScoreLayout::rows_by_keys ? c : r);
    return algo::pair_kept<kTest>(window_, seqlen_q_, seqlen_k_, row, key);
  }

  // Product s of element i of tile (mt, nt) in log2 units (rounded on its own), then modified by
  // Mod (the soft cap, then the ALiBi bias of the pair), before the mask: for logit() and apply().
  FP_HOST_DEVICE float scaled(float s, int mt, int nt, int i) const {
    const float x = algo::scaled_logit(s, scale_log2_);
    if constexpr (Mod::kActive) {
      float t;
      return mod_(x, row(mt, nt, i), key(mt, nt, i), t);
    } else {
      (void)mt, (void)nt, (void)i;
      return x;
    }
  }

  // The logit of product s, element i of tile (mt, nt): scaled(), then -inf where `masking`
  // applies and the pair is not kept.
  template <MaskMode kMode>
  FP_HOST_DEVICE float logit(float s, Masking<kMode> masking, int mt, int nt, int i) const {
    float x = scaled(s, mt, nt, i);
    if (masking.applies() && !keeps(mt, nt, i)) x = -std::numeric_limits<float>::infinity();
    return x;
  }

  // logit() over a whole fragment, in place: every product scaled, then, under one branch (the
  // tile's flag), the mask as one pass of selects.
  template <int kM, int kN, MaskMode kMode>
  FP_HOST_DEVICE void apply(arch::MmaC (&s)[kM][kN], Masking<kMode> masking) const {
    FP_UNROLL
    for (int mt = 0; mt < kM; ++mt)
      FP_UNROLL
      for (int nt = 0; nt < kN; ++nt)
        FP_UNROLL
        for (int i = 0; i < 4; ++i) s[mt][nt].reg[i] = scaled(s[mt][nt].reg[i], mt, nt, i);
    if (!masking.applies()) return;
    FP_UNROLL
    for (int mt = 0; mt < kM; ++mt)
      FP_UNROLL
      for (int nt = 0; nt < kN; ++nt)
        FP_UNROLL
        for (int i = 0; i < 4; ++i)
          s[mt][nt].reg[i] = keeps(mt, nt, i) ? s[mt][nt].reg[i] : -std::numeric_limits<float>::infinity();
  }

 private:
  const algo::WindowMask<int>& window_;
  const int& seqlen_q_;
  const int& seqlen_k_;
  float scale_log2_;
  int lane_, first_row_, first_key_;
  Mod mod_;
};

}  // namespace flashproof::tile
