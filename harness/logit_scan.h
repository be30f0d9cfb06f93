// The scaled logits s_ij = scale q_i.k_j of a case, in plain double over contiguous rows: the
// largest |s| among visible pairs (a case's logit scale in records and reports) and whether any
// pair, visible or masked, passes a limit (the valid domain of docs/spec.md: |s| <= 2^64, and
// likewise every ALiBi bias |slope| |distance|). The logits are those before a soft cap or a bias.
#pragma once

#include "core/problem.h"
#include "core/tensor.h"
#include "reference/dense_inputs.h"

namespace flashproof {

struct LogitScan {
  double max_visible = 0;     // NaN logits count as +inf
  bool beyond_limit = false;  // some |s_ij| > limit (masked pairs included)
};

LogitScan scan_logits(const Problem& p, const HostTensor& q, const HostTensor& k, double limit);
LogitScan scan_logits(const Problem& p, const reference::DenseRows& q, const reference::DenseRows& k,
                      double limit);

}  // namespace flashproof
