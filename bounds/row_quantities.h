// One query row's quantities as the forward formulas leave them for the O and LSE bounds and for
// the backward (docs/error-bounds.md Part 2). Per visible key unless said otherwise; each is an
// upper bound unless named _lo. One Row is reused for every row of a group: each stage resets
// what it fills before it reads it.
#pragma once

#include <cstdint>
#include <vector>

namespace flashproof::bounds {

struct Row {
  // Found and read by the group pass (group_bounds.h), shared with the envelopes.
  std::int64_t h = 0, i = 0;       // the query head and row
  std::vector<std::int64_t> keys;  // visible keys
  std::vector<double> q;           // the query row (head_dim values; read when keys is not empty)
  std::vector<double> dout;        // the row of dO (likewise, backward)
  // (F1) the exact-data quantities (double, with margins).
  // dist: max_k s_k - s_j (upper, lower); gap: LSE - s_j (upper, lower)
  // logit_abs is |y| of the modified logit (docs/error-bounds.md (M1)); raw_lo/raw_up bound the
  // unmodified |scale q.k| (equal to logit_abs's bounds without a soft cap or ALiBi).
  std::vector<double> abs_dot, logit_abs, dist, dist_lo, gap, gap_lo, p_up, p_lo, p_mid, raw_lo, raw_up;
  std::vector<double> raw_err;  // |x^ - L scale q.k| of the computed scaled product (F2), modified logits only
  // (F2)-(F7) the computed forward's.
  std::vector<bool> far;            // forward weight below 2^-kFarLog2 of the largest (F4)
  std::vector<double> arg_lse;      // absolute logit error in natural-log units (for LSE, backward)
  std::vector<double> rho;          // |P^_j - P_j| / P_j of the forward's weights (F5)
  double lse_abs = 0, log_den_lo = 0, lambda = 0, abs_weight = 0, lse_bound = 0;
  // |LSE^ - LSE~| with LSE~ the exact log-sum-exp of the computed logits (flash, (B1'): lse_bound
  // without the logits' own errors, which a backward recomputing the same logits shares).
  double lse_bound_computed = 0;
  // (S1) The log-error every weight gains from a split-KV combine (0 without one).
  double split_log = 0;
  std::vector<double> o_bound, o_mag;  // per column
};

// v with n elements, for per-key scratch that is written in full before it is read.
inline std::vector<double>& sized(std::vector<double>& v, std::int64_t n) {
  v.resize(static_cast<std::size_t>(n));
  return v;
}

}  // namespace flashproof::bounds
