// Checks of the reference attention, written as functions that return what failed (empty when
// all holds), so that the same checks run against the real reference (expecting no failure) and
// against its deliberately wrong variants (expecting failures).
#pragma once

#include <string>
#include <vector>

#include "reference/reference.h"

namespace flashproof::reference::checks {

using Failures = std::vector<std::string>;

// (c) Tiny cases computed by hand: 1x1, seqlen_k = 1 (P exactly 1), 2x2 with d = 1 and its
// closed-form gradients, bottom-right causal with seqlen_q != seqlen_k both ways (including
// rows that see no key), equal rows.
Failures hand_cases(Backend backend, Mutation mutation);

// (d) Directional derivatives of the reference gradients against central finite differences of
// the reference forward, both in MPFR at >= 256 bits, for dQ, dK and dV.
Failures finite_differences(Mutation mutation);

// (e) Invariants: O rows are convex combinations of the visible V rows (within bounds), rows of P
// sum to one, empty rows give O = 0, LSE = +inf and zero gradients.
Failures invariants(Backend backend, Mutation mutation);

}  // namespace flashproof::reference::checks
