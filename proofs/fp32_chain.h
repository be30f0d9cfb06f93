// A chain of small obligations over one input domain, as theorem 6 (fp_proofs.cpp) builds its
// proofs: bit-blasted fp32 multipliers and dividers make one big query slow (minutes for one FA1
// step), so each proof is a chain whose proved goals later ones assume, with lemma instances
// (fp32_lemmas.h) and, in the shipped variant, proved intermediate terms cut.
#pragma once

#include <string>
#include <vector>

#include "proofs/fp32_lemmas.h"
#include "proofs/fp32_terms.h"
#include "proofs/obligation.h"

namespace flashproof::proofs::fp32 {

// How a chain builds its queries.
// - proof (the shipped variant): lemmas are proved, and cuts are made: after `cut(term, name)` the
//   later obligations see a fresh constant `name` in place of the term, with every fact proved
//   about the term assumed of the constant. A proof for all values satisfying those facts covers
//   the term's own value, so it stands, and the term's circuits leave the later queries. (A
//   counterexample after a cut may give the constant a value the term cannot take: rerun the
//   obligation as a twin would before believing it.)
// - reference: the shipped functions' plain queries, built for the twin to compare against and to
//   record the facts it may assume.
// - refutation (the twin): lemmas are assumed (they do not depend on the variant), no cut is made,
//   and of the earlier goals only those also goals of the shipped functions (hence proved) are
//   assumed. So a counterexample is a model of the mutant's own terms.
struct Mode {
  enum class Kind { proof, reference, refutation } kind;
  std::vector<expr>* shipped_goals = nullptr;  // filled by reference, read by refutation
};

// Obligations in sequence over one input domain. Each assumes the goals proved before it (a goal
// that fails is itself the counterexample) and the instances of the lemmas, for the operations of
// its own goal and domain: a fact about other costly operations would bring their circuits, the
// bulk of the solving time, and is not needed.
class Chain {
 public:
  Chain(z3::context& c, Mode mode, std::vector<expr> domain)
      : mode_(mode), domain_(std::move(domain)), cut_terms_(c), cut_constants_(c) {}

  // A lemma proved by this chain (in the proof mode) and instantiated in its later obligations.
  void lemma(z3::context& c, Lemma lemma);
  // A lemma proved by an earlier chain of the same proof.
  void reuse(Lemma lemma) { lemmas_.push_back(lemma); }
  // From now on (proof mode only), `term` is the fresh constant `name` (see Mode).
  void cut(const expr& term, const std::string& name);
  void prove(std::string name, const expr& goal);

  std::vector<Obligation> take() { return std::move(obligations_); }

 private:
  bool trusted(const expr& fact) const;
  expr with_cuts(const expr& e);

  Mode mode_;
  std::vector<expr> domain_;
  std::vector<expr> facts_;  // as proved, before cuts
  std::vector<Lemma> lemmas_;
  z3::expr_vector cut_terms_;
  z3::expr_vector cut_constants_;
  std::vector<Obligation> obligations_;
};

}  // namespace flashproof::proofs::fp32
