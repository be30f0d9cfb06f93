// The bounds of one group, a batch entry and kv head with the query heads that share it: every
// query row of the group through the forward and backward row formulas, the keys' columns
// accumulated over the rows and finished at the end. Groups are independent (run in parallel).
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/backward_row.h"
#include "bounds/case_constants.h"
#include "bounds/forward_row.h"
#include "bounds/group_inputs.h"
#include "bounds/implementation_bounds.h"
#include "bounds/key_columns.h"
#include "bounds/row_quantities.h"
#include "core/output_sample.h"

namespace flashproof::bounds {

class GroupBounds {
 public:
  // d_error: as implementation_bounds takes it (null: none); wanted: the sample (null: every output).
  GroupBounds(const CaseConstants& cs, const Inputs& in, bool backward, const std::vector<double>* d_error,
              const OutputSample* wanted, ImplementationBounds& out)
      : cs_(cs), inputs_{in}, backward_(backward), d_error_(d_error), wanted_(wanted), out_(out) {}

  // Writes the group's elements of out (those of the sample with one).
  void run(std::int64_t b, std::int64_t hk);

 private:
  void write_forward(std::int64_t h, std::int64_t i);
  void add_backward(std::int64_t h, std::int64_t i, bool row_wanted);

  const CaseConstants& cs_;
  GroupInputs inputs_;
  bool backward_;
  const std::vector<double>* d_error_;
  const OutputSample* wanted_;
  ImplementationBounds& out_;
  Row row_;  // reused: every stage resets what it fills
  RowGradientTerms terms_;
  ForwardRowBounds forward_;
  BackwardRowBounds backward_row_;
  KeyColumnBounds columns_;
  std::vector<double> dq_share_;
};

}  // namespace flashproof::bounds
