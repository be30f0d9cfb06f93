#include "proofs/fp32_function_axioms.h"

#include <utility>

#include "proofs/term_walk.h"

namespace flashproof::proofs::fp32 {

const char* const kAssumedProperties =
    " Assumed per application: exp2(-inf)=+0; exp2(+-0)=1; x not NaN => exp2(x) not NaN, +0 or "
    "positive, +inf only if x>0; x<=0 => exp2(x)<=1; x<=y => exp2(x)<=exp2(y); finite l>=1 => "
    "ln(l) finite, |ln(l)|<=128.";

namespace {

// E1-E4 for one application y = exp2(x).
expr exp2_properties(const expr& y) {
  z3::context& c = y.ctx();
  const expr x = y.arg(0);
  const expr zero = f32(c, 0.0f);
  return z3::implies(is_neg_inf(x), plus_zero(y)) &&                                       // E1
         z3::implies(x.mk_is_zero(), is_one(y)) &&                                         // E2
         z3::implies(!is_nan(x), nonnegative(y) && z3::implies(y.mk_is_inf(), x > zero)) &&  // E3
         z3::implies(!is_nan(x) && x <= zero, y <= f32(c, 1.0f));                           // E4
}

// E5 for two applications, both directions.
expr exp2_monotone(const expr& a, const expr& b) {
  const expr x = a.arg(0);
  const expr y = b.arg(0);
  const expr numbers = !is_nan(x) && !is_nan(y);
  return z3::implies(numbers && x <= y, a <= b) && z3::implies(numbers && y <= x, b <= a);
}

// L1 for one application ln(l).
expr ln_properties(const expr& y) {
  const expr l = y.arg(0);
  return z3::implies(is_finite(l) && f32(y.ctx(), 1.0f) <= l, within(y, 128.0f));
}

// Same argument, same value.
expr consistent(const expr& a, const expr& b) { return z3::implies(a.arg(0) == b.arg(0), a == b); }

// The properties of every application in the roots, with consistency between applications of the
// same function.
std::vector<expr> function_properties(const std::vector<expr>& exp2s, const std::vector<expr>& lns) {
  std::vector<expr> out;
  for (std::size_t i = 0; i < exp2s.size(); ++i) {
    out.push_back(exp2_properties(exp2s[i]));
    for (std::size_t j = i + 1; j < exp2s.size(); ++j) {
      out.push_back(exp2_monotone(exp2s[i], exp2s[j]) && consistent(exp2s[i], exp2s[j]));
    }
  }
  for (std::size_t i = 0; i < lns.size(); ++i) {
    out.push_back(ln_properties(lns[i]));
    for (std::size_t j = i + 1; j < lns.size(); ++j) out.push_back(consistent(lns[i], lns[j]));
  }
  return out;
}

// Each application becomes a constant NAME[k].out, its argument is named NAME[k].in. Without
// uninterpreted functions the query is pure QF_FP, which Z3 bit-blasts eagerly; with them its SMT
// core handled FP lazily and timed out. The names make counterexample models readable.
void ackermannize(const std::vector<expr>& apps, const std::string& name, std::vector<expr>& terms) {
  if (apps.empty()) return;
  z3::context& c = apps.front().ctx();
  z3::expr_vector from(c), to(c);
  std::vector<expr> arguments;
  for (std::size_t k = 0; k < apps.size(); ++k) {
    const std::string prefix = name + "[" + std::to_string(k) + "]";
    from.push_back(apps[k]);
    to.push_back(c.constant((prefix + ".out").c_str(), apps[k].get_sort()));
    arguments.push_back(c.constant((prefix + ".in").c_str(), apps[k].arg(0).get_sort()) == apps[k].arg(0));
  }
  for (auto& t : terms) t = t.substitute(from, to);
  for (auto& a : arguments) terms.push_back(a.substitute(from, to));
}

}  // namespace

Obligation obligation(std::string name, const std::vector<expr>& assumptions, const expr& goal) {
  std::vector<expr> terms{goal};  // the goal first, to find it after the substitutions
  for (const auto& a : assumptions) terms.push_back(a);
  const auto exp2s = applications(terms, "exp2");
  const auto lns = applications(terms, "ln");
  for (auto& p : function_properties(exp2s, lns)) terms.push_back(std::move(p));
  ackermannize(exp2s, "exp2", terms);
  ackermannize(lns, "ln", terms);
  const expr reduced_goal = terms.front();
  terms.erase(terms.begin());
  return {std::move(name), std::move(terms), reduced_goal};
}

}  // namespace flashproof::proofs::fp32
