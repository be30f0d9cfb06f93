// Bound-free envelopes: for every output element, an interval that any implementation computing
// attention in floating point (fp32 or wider arithmetic, results rounded to the dtype) lands in,
// derived from the inputs alone, without an arithmetic model and without the reference. They judge
// what no rigorous bound judges: elements whose model bound is infinite, and cases outside the
// valid domain (docs/error-bounds.md), where accuracy is not promised but a finite wrong answer must not pass silently.
// With J_i the keys row i sees, s the slack (1/16 by default, harness/check.h):
//   O_ic    in [min_J v_jc, max_J v_jc] widened by s max_J |v_jc|   (a convex combination of V rows)
//   LSE_i   in [m_i, m_i + ln |J_i|] widened by s (M_i + ln |J_i| + 1), m_i the largest exact logit,
//           M_i the largest sum_c |scale q_ic k_jc| (an fp32 evaluation errs far below s M_i)
//   dV_jc   |.| <= (1 + s) sum over the rows seeing j of |dO_ic|        (P_ij <= 1)
//   dQ_ic   |.| <= (1 + s) |scale| W_i max_J |k_jc|                      (sum_j P_ij = 1)
//   dK_jc   |.| <= (1 + s) |scale| sum over the rows seeing j of W_i |q_ic|
// where W_i = G_i + (1 + s) H_i bounds |dP_ij - D_i|: G_i = max_J sum_c |dO_ic v_jc| bounds dP and
// H_i = sum_c |dO_ic| max_J |v_jc| bounds D = dO . O for any O inside O's envelope. A row that sees
// no key has O = 0, LSE = +inf and dQ = 0 exactly; a key no row sees has dK = dV = 0. Every width
// also gets the dtype's smallest subnormal (underflow). Evaluated in double from the exact inputs.
// NaN or inf inputs leave the exact result undefined: every element of their (batch, kv head)
// group gets (-inf, inf).
#pragma once

#include <vector>

#include "core/generators.h"
#include "core/problem.h"

namespace flashproof {

// Dense over a tensor's logical shape, row-major like reference::CertifiedTensor.
struct Envelope {
  std::vector<double> lo, hi;
  bool outside(std::size_t x, double value) const { return value < lo[x] || value > hi[x]; }
};

struct Envelopes {
  Envelope o, lse, dq, dk, dv;  // dq, dk, dv empty without backward
};

Envelopes bound_free_envelopes(const Problem& p, const Inputs& in, bool backward, double slack,
                               int threads = 0);

}  // namespace flashproof
