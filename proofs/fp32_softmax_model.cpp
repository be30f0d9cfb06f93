#include "proofs/fp32_softmax_model.h"

#include "kernels/algo/online_softmax.h"

namespace flashproof::proofs::fp32 {

expr logit_domain(const expr& x) { return is_neg_inf(x) || within(x, 0x1p66f); }

expr state_invariant(const expr& m, const expr& l) {
  return z3::implies(is_neg_inf(m), plus_zero(l)) && z3::implies(is_finite(m), f32(m.ctx(), 1.0f) <= l);
}

expr state_domain(const expr& m, const expr& l) {
  return (is_neg_inf(m) || within(m, 0x1p100f)) && nonnegative(l) && within(l, 0x1p100f) &&
         state_invariant(m, l);
}

Block make_block(const std::vector<expr>& logits) {
  expr m = logits.front();
  for (std::size_t j = 1; j < logits.size(); ++j) m = D::max(m, logits[j]);
  return {logits, m};
}

std::vector<expr> f32_vars(z3::context& c, const std::string& prefix) {
  std::vector<expr> xs;
  for (int j = 0; j < kBlock; ++j) xs.push_back(f32_var(c, prefix + std::to_string(j)));
  return xs;
}

std::vector<expr> block_domain(const Block& b) {
  std::vector<expr> out;
  for (const auto& x : b.logits) out.push_back(logit_domain(x));
  return out;
}

std::vector<expr> weights(const Block& b, const expr& offset) {
  std::vector<expr> p;
  for (const auto& x : b.logits) p.push_back(algo::shifted_exp2(x, offset));
  return p;
}

expr sum(const std::vector<expr>& xs) {
  expr s = xs.front();
  for (std::size_t j = 1; j < xs.size(); ++j) s = s + xs[j];
  return s;
}

expr dot(const std::vector<expr>& p, const std::vector<expr>& v) {
  expr s = D::mul(p.front(), v.front());
  for (std::size_t j = 1; j < p.size(); ++j) s = s + D::mul(p[j], v[j]);
  return s;
}

expr weight_ok(const expr& weight, const expr& x, const expr& new_max) {
  return in_unit(weight) && z3::implies(is_neg_inf(x), plus_zero(weight)) &&
         z3::implies(is_finite(x) && x == new_max, is_one(weight));
}

}  // namespace flashproof::proofs::fp32
