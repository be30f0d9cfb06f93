// The one pass over a group, a batch entry and kv head with the query heads that share it, for the
// rigorous bounds and the bound-free envelopes together: the group's K and V rows are read once;
// for every query row of the group, its visible keys (the mask predicate) are found and its q and
// dO rows read once, and handed to the bounds' forward and backward row formulas (the keys' columns
// accumulated over the rows and finished at the end) and to the envelopes (group_envelopes.h).
// Groups are independent (run in parallel).
//
// The dot products q.k_j and sum_c |q_c k_jc| are not shared: the bounds evaluate them with
// dot_and_abs (four lanes from head_dim 8 on, bound_arithmetic.h), the envelopes in plain order,
// and the two round differently; each keeps its own so that both stay bit for bit what they were
// (either evaluation is within the envelopes' slack; sharing one would move the envelopes' LSE by
// an ulp or so).
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/backward_row.h"
#include "bounds/case_constants.h"
#include "bounds/forward_row.h"
#include "bounds/group_envelopes.h"
#include "bounds/group_inputs.h"
#include "bounds/implementation_bounds.h"
#include "bounds/key_columns.h"
#include "bounds/row_quantities.h"
#include "core/output_sample.h"

namespace flashproof::bounds {

class GroupBounds {
 public:
  // d_error: as implementation_bounds takes it (null: none); wanted: the sample (null: every output);
  // out: the rigorous bounds (null: none computed, the envelopes alone).
  GroupBounds(const CaseConstants& cs, const Inputs& in, bool backward, const std::vector<double>* d_error,
              const OutputSample* wanted, ImplementationBounds* out)
      : cs_(cs), inputs_{in}, backward_(backward), d_error_(d_error), wanted_(wanted), out_(out) {}

  // Writes the group's elements of out (those of the sample with one) and, given envelopes (made
  // with the same sample), theirs.
  void run(std::int64_t b, std::int64_t hk, GroupEnvelopes* envelopes = nullptr);

 private:
  void write_forward(std::int64_t h, std::int64_t i);
  void add_backward(std::int64_t h, std::int64_t i, bool row_wanted);

  const CaseConstants& cs_;
  GroupInputs inputs_;
  bool backward_;
  const std::vector<double>* d_error_;
  const OutputSample* wanted_;
  ImplementationBounds* out_;
  Row row_;  // reused: every stage resets what it fills
  RowGradientTerms terms_;
  ForwardRowBounds forward_;
  BackwardRowBounds backward_row_;
  KeyColumnBounds columns_;
  std::vector<double> dq_share_;
};

}  // namespace flashproof::bounds
