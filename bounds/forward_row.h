// The forward bounds of one query row (docs/error-bounds.md Part 2, (F1)-(F7)), from its visible
// keys: the exact softmax (F1), the errors of the computed logits (F2), the shift and rescale chain (F3),
// the far weights (F4), the weights' relative errors, O's bound (F5)-(F6) and LSE's (F7).
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/case_constants.h"
#include "bounds/exact_softmax.h"
#include "bounds/group_inputs.h"
#include "bounds/output_bound.h"
#include "bounds/row_quantities.h"

namespace flashproof::bounds {

class ForwardRowBounds {
 public:
  // From r.keys and (when it holds a key) r.q, as the group pass found and read them, fills r:
  // r.o_bound (head_dim values) and r.lse_bound, 0 when the row sees no key (O = 0 and LSE = +inf
  // exactly), and what the backward reads. O's bound is computed when o_wanted or for the flash
  // model, whose backward's D takes it (B3); otherwise it stays 0.
  void compute(const CaseConstants& cs, const GroupInputs& g, Row& r, bool o_wanted);

 private:
  ExactSoftmax exact_;
  OutputBound output_;
  std::vector<double> arg_o_, own_;  // per-key scratch
};

}  // namespace flashproof::bounds
