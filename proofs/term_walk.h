// Walking Z3 terms: which operation a term applies, its subterms of a kind, and the applications
// of an uninterpreted function by name.
#pragma once

#include <z3++.h>

#include <functional>
#include <string>
#include <vector>

namespace flashproof::proofs {

bool is_op(const z3::expr& e, Z3_decl_kind kind);

// Every subterm of the roots satisfying `wanted`, each once, arguments before the term.
std::vector<z3::expr> subterms(const std::vector<z3::expr>& roots,
                               const std::function<bool(const z3::expr&)>& wanted);

// The applications of the unary uninterpreted function `name` in the roots, as subterms lists them.
std::vector<z3::expr> applications(const std::vector<z3::expr>& roots, const std::string& name);

}  // namespace flashproof::proofs
