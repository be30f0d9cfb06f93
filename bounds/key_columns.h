// (B6) of docs/error-bounds.md Part 2: the bounds of dK and dV of one group's keys, accumulated
// over the rows that see each key (dK_jc = scale sum_i dS_ij q_ic, dV_jc = sum_i P_ij dO_ic), with
// the share of D's errors in dK and the conditional flags; only the wanted keys are accumulated.
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/backward_row.h"
#include "bounds/case_constants.h"
#include "bounds/implementation_bounds.h"
#include "bounds/row_quantities.h"
#include "core/output_sample.h"

namespace flashproof::bounds {

class KeyColumnBounds {
 public:
  // Starts group (b, hk): every key wanted without a sample, otherwise the sample's columns.
  void start(const CaseConstants& cs, std::int64_t b, std::int64_t hk, const OutputSample* wanted,
             bool with_d_error);
  // The wanted keys of the group, in order.
  const std::vector<std::int64_t>& wanted_keys() const { return wanted_keys_; }
  // Row r (seeing at least one key) with its backward's terms: its contributions to its wanted keys.
  void add_row(const CaseConstants& cs, const Row& r, const RowGradientTerms& t);
  // Row r's share of an error e of its D in dK: sum_i P_ij e_i |q_ic| per wanted key j.
  void add_d_error(const CaseConstants& cs, const Row& r, double e);
  // The bounds of the wanted keys into out's dk, dv, dk_from_d_error (with a d_error) and dk_conditional.
  void finish(const CaseConstants& cs, std::int64_t b, std::int64_t hk, ImplementationBounds& out) const;

 private:
  std::vector<double> acc_sq_, acc_dsq_, acc_pdo_, acc_phdo_;  // per key and column, see add_row
  std::vector<double> acc_pdq_;  // sum_i P_ij e_i |q_ic| (dk_from_d_error)
  std::vector<std::int64_t> rows_seeing_;
  std::vector<std::uint8_t> column_conditional_;  // a row seeing the key may overflow dP or dS
  std::vector<std::int64_t> wanted_keys_;
  std::vector<std::uint8_t> key_wanted_;
  bool with_d_error_ = false;
};

}  // namespace flashproof::bounds
