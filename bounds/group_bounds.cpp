#include "bounds/group_bounds.h"

#include <algorithm>

namespace flashproof::bounds {

// With a sample, a row is visited for its own outputs (O, LSE, dQ) or for a wanted key it sees
// (its P and dS reach that key's dK, dV); nothing else is. A visited row's quantities depend on
// that row alone, so the bounds of the wanted elements are those of the full computation.
void GroupBounds::run(std::int64_t b, std::int64_t hk) {
  const Problem& p = cs_.p;
  inputs_.b = b, inputs_.hk = hk;
  read_kv_rows(inputs_.in, b, hk, inputs_.keys, inputs_.values);
  // Forward only: the columns are never started and no row is visited for a key.
  if (backward_) columns_.start(cs_, b, hk, wanted_, d_error_ != nullptr);
  const std::vector<std::int64_t>& wanted_keys = columns_.wanted_keys();
  const std::int64_t g = p.group_size();
  for (std::int64_t h = hk * g; h < (hk + 1) * g; ++h)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
      const bool row_wanted = !wanted_ || wanted_->row(cs_.row_index(b, h, i));
      if (!row_wanted && std::none_of(wanted_keys.begin(), wanted_keys.end(),
                                      [&](std::int64_t j) { return cs_.mask.visible(i, j); }))
        continue;
      forward_.compute(cs_, inputs_, h, i, row_, row_wanted);
      if (row_wanted) write_forward(h, i);
      if (backward_) add_backward(h, i, row_wanted);
    }
  if (backward_) columns_.finish(cs_, b, hk, out_);
}

void GroupBounds::write_forward(std::int64_t h, std::int64_t i) {
  const std::int64_t b = inputs_.b;
  for (std::int64_t c = 0; c < cs_.d; ++c) out_.o[cs_.o_index(b, i, h, c)] = row_.o_bound[c];
  out_.lse[cs_.row_index(b, h, i)] = row_.lse_bound;
}

void GroupBounds::add_backward(std::int64_t h, std::int64_t i, bool row_wanted) {
  const std::int64_t b = inputs_.b, d = cs_.d;
  if (row_.keys.empty()) {  // dQ = 0 exactly; nothing reaches a key
    if (row_wanted)
      for (std::int64_t c = 0; c < d; ++c) out_.dq[cs_.o_index(b, i, h, c)] = 0;
    return;
  }
  backward_row_.compute(cs_, inputs_, h, i, row_, row_wanted, terms_);
  if (row_wanted)
    for (std::int64_t c = 0; c < d; ++c) {
      out_.dq[cs_.o_index(b, i, h, c)] = terms_.dq[c];
      if (terms_.overflow_possible) out_.dq_conditional[cs_.o_index(b, i, h, c)] = 1;
    }
  columns_.add_row(cs_, row_, terms_);
  if (!d_error_) return;
  const double e = (*d_error_)[cs_.row_index(b, h, i)];
  if (row_wanted) {
    backward_row_.dq_from_d_error(cs_, inputs_, row_, e, dq_share_);
    for (std::int64_t c = 0; c < d; ++c) out_.dq_from_d_error[cs_.o_index(b, i, h, c)] = dq_share_[c];
  }
  columns_.add_d_error(cs_, row_, e);
}

}  // namespace flashproof::bounds
