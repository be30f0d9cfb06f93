#include "proofs/fp32_chain.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "proofs/fp32_function_axioms.h"
#include "proofs/term_walk.h"

namespace flashproof::proofs::fp32 {
namespace {

// An arithmetic operation or function application: each becomes a circuit when bit-blasted.
bool is_operation(const expr& e) {
  if (is_op(e, Z3_OP_UNINTERPRETED)) return e.num_args() > 0;
  for (auto kind : {Z3_OP_FPA_ADD, Z3_OP_FPA_SUB, Z3_OP_FPA_MUL, Z3_OP_FPA_DIV, Z3_OP_FPA_MAX, Z3_OP_FPA_MIN}) {
    if (is_op(e, kind)) return true;
  }
  return false;
}

// An operation whose circuit is large: all but max and min (which are comparisons).
bool is_costly(const expr& e) { return is_operation(e) && !is_op(e, Z3_OP_FPA_MAX) && !is_op(e, Z3_OP_FPA_MIN); }

std::unordered_set<unsigned> costly_ids(const std::vector<expr>& roots) {
  std::unordered_set<unsigned> ids;
  for (const auto& e : subterms(roots, is_costly)) ids.insert(e.id());
  return ids;
}

}  // namespace

void Chain::lemma(z3::context& c, Lemma lemma) {
  if (mode_.kind == Mode::Kind::proof) obligations_.push_back(lemma_obligation(c, lemma));
  reuse(lemma);
}

void Chain::cut(const expr& term, const std::string& name) {
  if (mode_.kind != Mode::Kind::proof) return;
  cut_terms_.push_back(term);
  cut_constants_.push_back(term.ctx().constant(name.c_str(), term.get_sort()));
}

void Chain::prove(std::string name, const expr& goal) {
  const expr own_goal = with_cuts(goal);
  const std::vector<expr> own = joined<expr>(domain_, {own_goal});
  const auto own_ids = costly_ids(own);
  std::vector<expr> assumptions = domain_;
  for (const auto& proved : facts_) {
    if (!trusted(proved)) continue;
    const expr fact = with_cuts(proved);
    const auto ids = costly_ids({fact});
    if (std::all_of(ids.begin(), ids.end(), [&](unsigned id) { return own_ids.count(id) > 0; })) {
      assumptions.push_back(fact);
    }
  }
  for (const auto& e : subterms(own, is_operation)) {
    for (Lemma lemma : lemmas_) {
      if (auto instance = lemma_instance(lemma, e)) assumptions.push_back(*instance);
    }
  }
  obligations_.push_back(obligation(std::move(name), assumptions, own_goal));
  facts_.push_back(goal);
  if (mode_.kind == Mode::Kind::reference) mode_.shipped_goals->push_back(goal);
}

bool Chain::trusted(const expr& fact) const {
  if (mode_.kind != Mode::Kind::refutation) return true;
  const auto& proved = *mode_.shipped_goals;
  return std::any_of(proved.begin(), proved.end(), [&](const expr& g) { return z3::eq(g, fact); });
}

expr Chain::with_cuts(const expr& e) {
  if (cut_terms_.empty()) return e;
  expr copy = e;  // substitute is not const
  return copy.substitute(cut_terms_, cut_constants_);
}

}  // namespace flashproof::proofs::fp32
