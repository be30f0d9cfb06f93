// (F5)-(F6) of docs/error-bounds.md Part 2: the bound of one query row's O, per column. The
// computed O_c = sum_j pi^_j v_jc (1 + phi_j) against the exact sum_j P_j v_jc, then the final
// division and the rounding to the dtype; the centred form (F5') where the weights' errors are
// large; capped by (F6), the convex-combination bound.
#pragma once

#include <vector>

#include "bounds/case_constants.h"
#include "bounds/row_quantities.h"

namespace flashproof::bounds {

class OutputBound {
 public:
  // From the row's (F1)-(F4) quantities, the value rows (value j at j * head_dim) and the row sum's
  // gamma (g_sum), relative error of the denominator from absolute errors (zeta) and lower bound
  // (l_low): sets r.o_bound and r.o_mag.
  void compute(const CaseConstants& cs, const std::vector<double>& value_rows, Row& r, double g_sum, double zeta,
               double l_low);

 private:
  std::vector<double> col_mag_, col_err_, col_abs_, col_min_, col_max_, col_top_, col_mid_;  // per-column scratch
};

}  // namespace flashproof::bounds
