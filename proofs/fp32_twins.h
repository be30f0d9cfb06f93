// The twins of theorem 6 (fp_proofs.cpp): local copies of shipped kernels/algo functions, each with
// exactly one change, which the proofs must refute; and `pick`, which selects a variant's function.
#pragma once

#include "kernels/algo/online_softmax.h"
#include "kernels/algo/softmax_backward.h"
#include "proofs/fp32_terms.h"
#include "proofs/obligation.h"

namespace flashproof::proofs::fp32 {

using Fa2RescaleFn = algo::Fa2Rescale<expr> (*)(expr, expr);
using Fa1CombineFn = algo::Fa1Combine<expr> (*)(expr, expr, expr, expr);
using FinalizeFn = algo::RowOutput<expr> (*)(expr, expr, expr);
using RecomputeFn = expr (*)(expr, expr);

template <class Fn>
Fn pick(Variant v, Fn shipped, Fn twin) {
  return v == Variant::shipped ? shipped : twin;
}

// fa2_rescale with the factor taken from the block max instead of the running max.
algo::Fa2Rescale<expr> fa2_rescale_factor_of_block_max(expr running_max, expr block_max);
// fa2_rescale with exponent_offset's -inf guard removed (offset = m).
algo::Fa2Rescale<expr> fa2_rescale_unguarded(expr running_max, expr block_max);
// fa1_combine without the l = 0 test.
algo::Fa1Combine<expr> fa1_combine_unguarded(expr running_max, expr running_sum, expr block_max, expr block_sum);
// finalize_row without the empty-row test.
algo::RowOutput<expr> finalize_row_unguarded(expr m, expr l, expr ln2);
// recompute_prob without the clamp of the argument at 0.
expr recompute_prob_unclamped(expr x, expr lse_in_log2);

}  // namespace flashproof::proofs::fp32
