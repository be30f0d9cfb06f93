#include "proofs/term_walk.h"

#include <unordered_set>

namespace flashproof::proofs {

bool is_op(const z3::expr& e, Z3_decl_kind kind) { return e.is_app() && e.decl().decl_kind() == kind; }

std::vector<z3::expr> subterms(const std::vector<z3::expr>& roots,
                               const std::function<bool(const z3::expr&)>& wanted) {
  std::unordered_set<unsigned> seen;
  std::vector<z3::expr> out;
  std::function<void(const z3::expr&)> walk = [&](const z3::expr& e) {
    if (!e.is_app() || !seen.insert(e.id()).second) return;
    for (unsigned i = 0; i < e.num_args(); ++i) walk(e.arg(i));
    if (wanted(e)) out.push_back(e);
  };
  for (const auto& r : roots) walk(r);
  return out;
}

std::vector<z3::expr> applications(const std::vector<z3::expr>& roots, const std::string& name) {
  return subterms(roots, [&](const z3::expr& e) {
    return is_op(e, Z3_OP_UNINTERPRETED) && e.num_args() == 1 && e.decl().name().str() == name;
  });
}

}  // namespace flashproof::proofs
