#include "bounds/group_bounds.h"

#include <algorithm>

namespace flashproof::bounds {

// With a sample, the bounds visit a row for its own outputs (O, LSE, dQ) or for a wanted key it
// sees (its P and dS reach that key's dK, dV); nothing else. A visited row's quantities depend on
// that row alone, so the bounds of the wanted elements are those of the full computation. The
// envelopes take every row of the sample, and the other rows too where they reach the sample's
// columns (group_envelopes.h). A row is read once for whichever of them takes it.
void GroupBounds::run(std::int64_t b, std::int64_t hk, GroupEnvelopes* envelopes) {
  const Problem& p = cs_.p;
  const std::int64_t d = cs_.d;
  inputs_.b = b, inputs_.hk = hk;
  read_kv_rows(inputs_.in, b, hk, inputs_.keys, inputs_.values);
  const bool rigorous = out_ != nullptr;
  if (envelopes && !envelopes->start(b, hk, inputs_.keys, inputs_.values)) envelopes = nullptr;  // left open
  // Forward only: the columns are never started and no row is visited for a key.
  if (rigorous && backward_) columns_.start(cs_, b, hk, wanted_, d_error_ != nullptr);
  const std::vector<std::int64_t>& wanted_keys = columns_.wanted_keys();
  const bool others_reach_columns = envelopes && envelopes->rows_outside_sample_reach_columns();
  const std::int64_t g = p.group_size();
  for (std::int64_t h = hk * g; h < (hk + 1) * g; ++h)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
      const bool row_wanted = !wanted_ || wanted_->row(cs_.row_index(b, h, i));
      const algo::KeyRange<std::int64_t> seen = cs_.keys.of_row(i);
      const bool bounds_visit =
          rigorous && (row_wanted || std::any_of(wanted_keys.begin(), wanted_keys.end(),
                                                 [&](std::int64_t j) { return seen.contains(j); }));
      const bool envelope_judges = envelopes && row_wanted;
      const bool envelope_other = !row_wanted && others_reach_columns;
      if (!bounds_visit && !envelope_judges && !envelope_other) continue;
      row_.keys.clear();
      if (bounds_visit || envelope_judges)
        for (std::int64_t j = seen.begin; j < seen.end; ++j) row_.keys.push_back(j);
      if (!row_.keys.empty() || envelope_other) {
        row_.q.resize(d);
        inputs_.in.q.read_row(b, i, h, row_.q.data());
        if (backward_) {
          row_.dout.resize(d);
          inputs_.in.dout.read_row(b, i, h, row_.dout.data());
        }
      }
      if (bounds_visit) {
        row_.h = h, row_.i = i;
        forward_.compute(cs_, inputs_, row_, row_wanted);
        if (row_wanted) write_forward(h, i);
        if (backward_) add_backward(h, i, row_wanted);
      }
      if (envelope_judges) envelopes->judged_row(h, i, row_.keys, row_.q, row_.dout);
      if (envelope_other) envelopes->other_row(i, row_.q, row_.dout);
    }
  if (rigorous && backward_) columns_.finish(cs_, b, hk, *out_);
  if (envelopes) envelopes->finish();
}

void GroupBounds::write_forward(std::int64_t h, std::int64_t i) {
  const std::int64_t b = inputs_.b;
  for (std::int64_t c = 0; c < cs_.d; ++c) out_->o[cs_.o_index(b, i, h, c)] = row_.o_bound[c];
  out_->lse[cs_.row_index(b, h, i)] = row_.lse_bound;
}

void GroupBounds::add_backward(std::int64_t h, std::int64_t i, bool row_wanted) {
  const std::int64_t b = inputs_.b, d = cs_.d;
  ImplementationBounds& out = *out_;
  if (row_.keys.empty()) {  // dQ = 0 exactly; nothing reaches a key
    if (row_wanted)
      for (std::int64_t c = 0; c < d; ++c) out.dq[cs_.o_index(b, i, h, c)] = 0;
    return;
  }
  backward_row_.compute(cs_, inputs_, row_, row_wanted, terms_);
  if (row_wanted)
    for (std::int64_t c = 0; c < d; ++c) {
      out.dq[cs_.o_index(b, i, h, c)] = terms_.dq[c];
      if (terms_.overflow_possible) out.dq_conditional[cs_.o_index(b, i, h, c)] = 1;
    }
  columns_.add_row(cs_, row_, terms_);
  if (!d_error_) return;
  const double e = (*d_error_)[cs_.row_index(b, h, i)];
  if (row_wanted) {
    backward_row_.dq_from_d_error(cs_, inputs_, row_, e, dq_share_);
    for (std::int64_t c = 0; c < d; ++c) out.dq_from_d_error[cs_.o_index(b, i, h, c)] = dq_share_[c];
  }
  columns_.add_d_error(cs_, row_, e);
}

}  // namespace flashproof::bounds
