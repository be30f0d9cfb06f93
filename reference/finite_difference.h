// The central difference of the loss L = sum(dO * O) along a direction of Q, K or V, with its
// error certified: L's evaluation error (the reference's MPFR engine) over 2h, and the difference
// quotient's truncation error, bounded from the inputs (no step size is trusted to be "small").
#pragma once

#include <vector>

#include "reference/dense_inputs.h"

namespace flashproof::reference {

// (L(x + h u) - L(x - h u)) / 2h computed at `bits`; |value - dL/dt at t = 0| <= evaluation +
// truncation, where L(t) = L(x + t u).
struct CentralDifference {
  double value = 0;
  double evaluation = 0;  // the MPFR losses' certified error over 2h, and the final roundings
  double truncation = 0;  // difference_truncation_bound(base, rows, dir, h)
};
CentralDifference central_difference(const DenseInputs& base, DenseRows DenseInputs::*rows, const std::vector<double>& dir,
                                     double h, unsigned bits);

// An upper bound on |(L(h) - L(-h)) / 2h - L'(0)| <= h^2 / 6 max |L'''|. Along a direction of Q or
// K each row's logits move linearly, z_j(t) = z_j + t a_j, and the row's share of L is E_t[w] with
// w_j = dO_i . v_j under the softmax of z(t) over its visible keys; its third derivative is the
// joint cumulant E[w~ a~^3] - 3 Var(a) E[w~ a~] (~: centred under that softmax), whose size is at
// most (1/4 + 3/8) R_w R_a^3 for the ranges R_w, R_a of w and a over the visible keys, whatever t.
// Along V, L is linear: 0.
double difference_truncation_bound(const DenseInputs& base, DenseRows DenseInputs::*rows, const std::vector<double>& dir,
                                   double h);

}  // namespace flashproof::reference
