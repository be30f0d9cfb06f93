#include "bounds/case_constants.h"

#include <cmath>

#include "bounds/bound_arithmetic.h"

namespace flashproof::bounds {

CaseConstants::CaseConstants(const Problem& problem, ArithmeticModel model, GqaGradientReduction gqa,
                             bool recomputed_logits, std::int64_t key_splits)
    : p(problem), k(constants_for(model, problem.dtype)),
      keys(problem), d(problem.head_dim),
      dot_len(ceil_div(problem.head_dim, k.dot_block) * k.dot_block),
      sig(std::fabs(static_cast<double>(problem.softmax_scale()))),
      steps(k.flash ? ceil_div(problem.max_seqlen_k(), 16) + 2 : 0), lam_u(lam(k.u)), lam_uh(lam(k.dtype_u)),
      lam_exp(lam(k.exp_rel)), lam_exp_chain(lam(k.exp_rel + 5 * k.u)),
      exp_rounds_up(std::exp(lam_uh + (2 * static_cast<double>(steps) + 3) * lam_u)),
      exp_rounds_lo(std::exp(-lam_uh - (2 * static_cast<double>(steps) + 3) * lam_u)),
      per_head_rounded(gqa == GqaGradientReduction::per_head_rounded && problem.group_size() > 1),
      recomputed_logits(recomputed_logits), key_splits(k.flash ? key_splits : 1),
      split_sum(this->key_splits > 1 ? gam(2 * static_cast<double>(this->key_splits) + 6, k.u) : 0) {}

double CaseConstants::scaled_sum_bound(double s1, double s2, double g) const {
  const double u = k.u, uh = k.dtype_u;
  const double e = sig * (s1 + g * s2);
  const double e1 = e + u * (sig * s2 + e);
  return e1 + uh * (sig * s2 + e1) + k.dtype_abs;
}

double CaseConstants::per_head(double bound, double mag) const {
  if (!per_head_rounded) return bound;
  const double g = static_cast<double>(p.group_size());
  const double rounded = k.dtype_u * (mag + bound) + g * k.dtype_abs;
  return bound + (rounded + gam(g, k.u) * (mag + bound + rounded)) * (1 + k.dtype_u);
}

}  // namespace flashproof::bounds
