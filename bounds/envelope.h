// Bound-free envelopes: for every output element, an interval that any implementation computing
// attention in floating point (fp32 or wider arithmetic, results rounded to the dtype) lands in,
// derived from the inputs alone, without an arithmetic model and without the reference. They judge
// every judged element, always, beside the rigorous bound: at large logits a model's finite bound
// can be wider than the envelope (values it rules out would pass otherwise); where no bound judges
// (an infinite or vacuous one, and outside the valid domain, docs/error-bounds.md) they are all that
// keeps a finite wrong answer from passing silently.
// With J_i the keys row i sees, s the slack (1/16 by default, CheckOptions::envelope_slack in
// harness/check.h):
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
// The envelopes are computed in the same pass over each group as the rigorous bounds
// (bounds_and_envelopes, implementation_bounds.h; group_envelopes.h is their part of it).
#pragma once

#include <string>
#include <vector>

#include "core/generators.h"
#include "core/output_sample.h"
#include "core/problem.h"

namespace flashproof::bounds {

// Dense over a tensor's logical shape, row-major like reference::CertifiedTensor.
struct Envelope {
  std::vector<double> lo, hi;
  bool outside(std::size_t x, double value) const { return value < lo[x] || value > hi[x]; }
};

// Each tensor's envelope rule in words, for the reasons a tensor fails ("O" ... "dV").
const char* envelope_rule(const std::string& tensor);

struct Envelopes {
  Envelope o, lse, dq, dk, dv;  // dq, dk, dv empty without backward
};

// With a sample (a sampled check), only its rows' O, LSE and dQ and its columns' dK and dV are
// filled; the other rows add to those columns with the wider W_i of every key in their group.
// The envelopes alone (bounds_and_envelopes without the rigorous bounds). Throws
// std::invalid_argument for mismatched shapes or a sample that does not match p.
Envelopes bound_free_envelopes(const ValidProblem& p, const Inputs& in, bool backward, double slack,
                               const OutputSample* sample = nullptr, int threads = 0);

// Every envelope sized for p and set to 0 (dq, dk, dv only with backward): where the group pass
// starts.
Envelopes zero_envelopes(const Problem& p, bool backward);

}  // namespace flashproof::bounds
