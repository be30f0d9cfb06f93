// The gradient check of the recomputed backward against central finite differences of the
// reference's forward loss in high precision (docs/properties.md), independent of the reference's own
// backward formulas: a gradient formula wrong in the same way in the reference and in a kernel
// would pass the differential comparison, not this.
#pragma once

#include "core/attention_impl.h"
#include "harness/check.h"
#include "properties/properties.h"

namespace flashproof::properties {

// For Q, K and V in turn, a direction u in {-1, 0, 1} (seeded by the case): the implementation's
// <grad, u> (its dQ, dK, dV for the loss L = sum(dO * O)) against (L(x + h u) - L(x - h u)) / 2h
// (reference/finite_difference.h), L computed by the reference's MPFR engine at 256 bits, or more
// where L's certified error over 2h exceeds an eighth of the allowance (up to 4096 bits; beyond,
// the tensor is "not judged"). h starts 2^-30 below the largest element and shrinks until the
// certified truncation bound of the difference quotient is within an eighth of the allowance.
// Allowed: the tensor's accuracy tolerance (rule 3's, harness/check.h; per element) times sum |u|
// where rule 3 applies, else sum |u_i| B_i with B the rigorous bound (rule 3 stops where the
// logits' fp32 rounding moves P: harness/check.h), plus the rounding of the sum <grad, u>, plus
// the difference's certified evaluation and truncation errors. A tensor with a NaN or infinite
// element fails; one with no finite bound is tagged "not judged". Elements whose perturbation is not exact in double are left unperturbed.
Outcome gradient_finite_differences(AttentionImpl& impl, const Case& c);

}  // namespace flashproof::properties
