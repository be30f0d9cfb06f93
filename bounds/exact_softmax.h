// (F1) of docs/error-bounds.md Part 2: the exact logits and probabilities of one query row, from
// double with certified margins. The logit s_j = scale q.k_j lies within err_j of its double
// value; P_j lies in [p_lo, p_up]; with them the distances to the row's largest logit and to LSE.
#pragma once

#include <vector>

#include "bounds/case_constants.h"
#include "bounds/row_quantities.h"

namespace flashproof::bounds {

class ExactSoftmax {
 public:
  // From r.q, r.keys (at least one) and the group's key rows (key j at j * head_dim), fills
  // r.abs_dot, logit_abs, dist, dist_lo, gap, gap_lo, p_up, p_lo, p_mid, log_den_lo and lse_abs.
  void compute(const CaseConstants& cs, const std::vector<double>& key_rows, Row& r);

 private:
  std::vector<double> sd_, err_, e_, delta_;  // per-key scratch
};

}  // namespace flashproof::bounds
