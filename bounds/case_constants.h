// What every row of one case shares: the problem, the arithmetic constants of its model, the mask,
// and the constants of the formulas computed once rather than per row; with the output indexing and
// the two final-rounding bounds that the dQ, dK and dV formulas end with.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bounds/arithmetic_constants.h"
#include "core/attention_impl.h"
#include "core/problem.h"
#include "kernels/algo/row_keys.h"

namespace flashproof::bounds {

struct CaseConstants {
  CaseConstants(const Problem& p, ArithmeticModel model, GqaGradientReduction gqa, bool recomputed_logits = false,
                std::int64_t key_splits = 1);

  const Problem& p;
  ArithmeticConstants k;
  algo::RowKeys keys;       // the keys each row sees (dense or packed)
  std::int64_t d, dot_len;  // head_dim, and the head dim padded to the tensor-core k
  double sig;               // |softmax_scale|
  std::int64_t steps;       // flash: rescale steps a weight can pass through (F3)
  // lam of the roundings (u, the dtype's, exp's, a rescale step's) and the exp of (F5)'s rounding
  // chain, up and down.
  double lam_u, lam_uh, lam_exp, lam_exp_chain, exp_rounds_up, exp_rounds_lo;
  bool per_head_rounded;  // GqaGradientReduction::per_head_rounded with a group of several heads
  // The backward recomputes each logit bit for bit as the forward did (BoundsRequest::recomputed_logits).
  bool recomputed_logits;
  // Flash model: the most partial results a row's keys may be split into and combined (split-KV,
  // BoundsRequest::key_splits); 1: none.
  std::int64_t key_splits;
  // (S1) The combine's relative error on the sum of a row's weights, gamma_{2S+6}(u) (0 without
  // splits): whatever the partial LSEs' errors, the coefficients c_s / L sum to 1 up to it.
  double split_sum;

  // Element c of query row i of head h ([b, sq, hq, d]); of key row j of kv head hk ([b, sk, hkv, d]);
  // query row i of head h in LSE ([b, hq, sq]).
  std::size_t o_index(std::int64_t b, std::int64_t i, std::int64_t h, std::int64_t c) const {
    return static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * d + c);
  }
  std::size_t kv_index(std::int64_t b, std::int64_t j, std::int64_t hk, std::int64_t c) const {
    return static_cast<std::size_t>(((b * p.seqlen_k + j) * p.heads_kv + hk) * d + c);
  }
  std::size_t row_index(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return static_cast<std::size_t>((b * p.heads_q + h) * p.seqlen_q + i);
  }

  // |fl_dtype(fl(y^ * scale)) - scale y| with |y^ - y| <= s1 + g s2 and |y| <= s2.
  double scaled_sum_bound(double s1, double s2, double g) const;
  // per_head_rounded: the g heads' shares, each within `bound` of its exact value together and of
  // magnitude `mag` together, are each rounded to the dtype (u_h relative, a_h absolute) and summed
  // in fp32 (gamma_g) before the final rounding that `bound` already holds.
  double per_head(double bound, double mag) const;
};

}  // namespace flashproof::bounds
