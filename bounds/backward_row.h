// The backward bounds of one query row (docs/error-bounds.md Part 2, (B1)-(B5)): P recomputed
// (flash: from the stored LSE; naive: the forward's P), dP, D and dS with their errors, and dQ's
// bound; what the row adds to dK and dV is left in RowGradientTerms for KeyColumnBounds (B6).
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/case_constants.h"
#include "bounds/group_inputs.h"
#include "bounds/row_quantities.h"

namespace flashproof::bounds {

// What one row's backward leaves for its dQ and for the columns of the keys it sees.
struct RowGradientTerms {
  std::vector<double> sigma, ds_up;    // per key: the error of dS, and a bound on |dS| (B4)
  std::vector<double> ph_err, ph_hat;  // per key: the error of P rounded to the dtype, and a bound on it (B1)
  // dP (naive) or dS may pass the dtype's largest value: the row's bounds are conditional
  // (ImplementationBounds::dq_conditional).
  bool overflow_possible = false;
  std::vector<double> dq;  // (B5) per column, when wanted
};

class BackwardRowBounds {
 public:
  // For a query row that sees at least one key, after ForwardRowBounds filled r (r.dout read by
  // the group pass).
  void compute(const CaseConstants& cs, const GroupInputs& g, const Row& r, bool dq_wanted, RowGradientTerms& t);
  // The row's share of an error e of D_i in dQ: |scale| e sum_j P_j |k_jc| per column c, into dq_share.
  void dq_from_d_error(const CaseConstants& cs, const GroupInputs& g, const Row& r, double e,
                       std::vector<double>& dq_share);

 private:
  // (B5) dQ_c = scale sum_j dS_j k_jc, from t.sigma and t.ds_up.
  void dq_bound(const CaseConstants& cs, const GroupInputs& g, const Row& r, RowGradientTerms& t);

  std::vector<double> dp_, dp_abs_, p_err_, p_hat_, dp_err_;  // per-key scratch
  std::vector<double> col_err_, col_mag_, col_abs_;           // per-column scratch
};

}  // namespace flashproof::bounds
