// The bound-free envelopes (envelope.h) of one group, a batch entry and kv head with the query
// heads that share it, fed a row at a time by the group pass (group_bounds.h) from the data it
// shares with the rigorous bounds: the group's K and V rows, each row's visible keys, its q and dO.
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/envelope.h"
#include "core/generators.h"
#include "core/output_sample.h"
#include "core/problem.h"
#include "kernels/algo/row_keys.h"

namespace flashproof::bounds {

class GroupEnvelopes {
 public:
  // sample: a sampled check's (null: every output), the same the bounds are given.
  GroupEnvelopes(const Problem& p, const Inputs& in, bool backward, double slack, const OutputSample* sample,
                 Envelopes& out);

  // Starts group (b, hk) from its key and value rows (key j at j * head_dim; kept by reference until
  // finish). false when an input of the group is NaN or inf: its elements are then left open
  // ((-inf, inf)) and no row is to be handed over, nor finish called.
  bool start(std::int64_t b, std::int64_t hk, const std::vector<double>& keys, const std::vector<double>& values);
  // Whether a row outside the sample still adds to the sample's key columns (backward, with columns):
  // then it is handed over with other_row.
  bool rows_outside_sample_reach_columns() const { return backward_ && !cols_.empty(); }
  // A judged row i of head h (every row without a sample, else the sample's): its visible keys in
  // order, and, when it sees one, its q and (backward) dO, head_dim values each.
  void judged_row(std::int64_t h, std::int64_t i, const std::vector<std::int64_t>& keys, const std::vector<double>& q,
                  const std::vector<double>& dout);
  // A row outside the sample (only when rows_outside_sample_reach_columns): its q and dO.
  void other_row(std::int64_t i, const std::vector<double>& q, const std::vector<double>& dout);
  // dK and dV of the group's keys (backward).
  void finish();

 private:
  bool group_finite();
  void unconstrained();
  void sampled_columns();
  void add_to_columns(std::int64_t i, double w, const std::vector<std::int64_t>* keys, const std::vector<double>& q,
                      const std::vector<double>& dout);

  const Problem& p_;
  const Inputs& in_;
  bool backward_;
  double s_;
  const OutputSample* sample_;
  Envelopes& out_;
  std::int64_t d_, b_ = 0, hk_ = 0;
  double scale_, tiny_;
  algo::RowKeys keys_;
  const std::vector<double>*key_ = nullptr, *val_ = nullptr;
  std::vector<std::int64_t> cols_;
  std::vector<double> q_, dout_, vmin_, vmax_, vabs_, vabs_all_, kabs_, dk_sum_, dv_sum_;
  std::vector<std::uint8_t> seen_;
};

}  // namespace flashproof::bounds
