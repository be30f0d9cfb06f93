// Arithmetic lemmas of theorem 6 (fp_proofs.cpp): facts about single fp32 operations.
//
// Bit-blasted multipliers, dividers and adders are what make the queries slow. These lemmas about
// single operations are proved on free operands by their own small obligations, then instantiated
// for every matching operation in the later obligations of the same proof, which then need no
// search through the circuits. An instance is a true statement about IEEE arithmetic, so it only
// removes models that cannot exist: outcomes do not change, and a counterexample is still one of
// the plain query (proof.cpp checks it against all assumptions).
#pragma once

#include <optional>

#include "proofs/fp32_terms.h"
#include "proofs/obligation.h"

namespace flashproof::proofs::fp32 {

enum class Lemma { weight_times_value, value_times_weight, reciprocal, difference };

// The lemma for one operation term, or nothing when the term is not of the lemma's kind. The
// lemmas are proved with the context's rounding mode (round to nearest even).
std::optional<expr> lemma_instance(Lemma lemma, const expr& e);

// The lemma's own obligation, on free operands.
Obligation lemma_obligation(z3::context& c, Lemma lemma);

}  // namespace flashproof::proofs::fp32
