// How theorem 6 (fp_proofs.cpp) turns one obligation builder into a ProofSpec's two variants: the
// shipped functions proved (Mode proof), and the twin refuted on the obligations its change touches
// (Mode reference for the shipped queries, then Mode refutation; the twin's obligations that are
// the shipped functions' queries verbatim are dropped).
#pragma once

#include <algorithm>
#include <vector>

#include "proofs/fp32_chain.h"
#include "proofs/obligation.h"

namespace flashproof::proofs::fp32 {

inline bool same_query(const Obligation& a, const Obligation& b) {
  if (!z3::eq(a.goal, b.goal) || a.assumptions.size() != b.assumptions.size()) return false;
  for (std::size_t i = 0; i < a.assumptions.size(); ++i) {
    if (!z3::eq(a.assumptions[i], b.assumptions[i])) return false;
  }
  return true;
}

using Builder = std::vector<Obligation> (*)(z3::context&, Variant, Mode);

template <Builder build>
std::vector<Obligation> build_variant(z3::context& c, Variant variant) {
  if (variant == Variant::shipped) return build(c, Variant::shipped, {Mode::Kind::proof});
  std::vector<expr> shipped_goals;
  const std::vector<Obligation> shipped = build(c, Variant::shipped, {Mode::Kind::reference, &shipped_goals});
  std::vector<Obligation> obligations = build(c, Variant::twin, {Mode::Kind::refutation, &shipped_goals});
  std::erase_if(obligations, [&](const Obligation& ob) {
    return std::any_of(shipped.begin(), shipped.end(), [&](const Obligation& s) { return same_query(ob, s); });
  });
  return obligations;
}

}  // namespace flashproof::proofs::fp32
