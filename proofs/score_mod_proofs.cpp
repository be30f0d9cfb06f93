// Theorem 8, the soft cap and ALiBi (docs/spec.md "Soft cap and ALiBi"), over the shipped pieces of
// kernels/algo/score_mod.h and online_softmax.h instantiated with Z3 reals; tanh is uninterpreted,
// constrained by ground instances of what the kernels' tanhf keeps (monotone, odd, within (-1, 1)):
// - score_mod_monotone_cap: soft_cap(x) = C tanh(x I) with C, I > 0 is monotone in x and within
//   (-C, C): capping keeps the order of a row's logits and bounds them, so no capped logit
//   overflows whatever the raw one was.
// - score_mod_max_first: a row's modified logits y_j = soft_cap(x_j) + alibi_bias(s_h, d_j) enter the
//   online softmax (fa2_rescale over their block maximum) before the maximum is taken: every
//   weight's argument y_j - offset is <= 0, so every weight exp2(.) lies in [0, 1] (the invariant
//   theorems 1 and 6 rest on) for every cap, slope and distance.
#include <z3++.h>

#include <vector>

#include "kernels/algo/online_softmax.h"
#include "kernels/algo/score_mod.h"
#include "proofs/catalog.h"
#include "proofs/z3_domain.h"

namespace flashproof::proofs {
namespace {

using Expr = z3::expr;
using D = algo::Domain<Expr>;

Expr tanh_of(const Expr& x) { return D::tanh(x); }

// What the proofs may assume of tanh at the points they apply it: within (-1, 1), odd, monotone.
std::vector<Expr> tanh_axioms(const std::vector<Expr>& args) {
  std::vector<Expr> a;
  for (const Expr& x : args) {
    a.push_back(-1 < tanh_of(x) && tanh_of(x) < 1);
    a.push_back(tanh_of(-x) == -tanh_of(x));
    a.push_back(z3::implies(x >= 0, tanh_of(x) >= 0));
    for (const Expr& y : args) a.push_back(z3::implies(x <= y, tanh_of(x) <= tanh_of(y)));
  }
  return a;
}

// The twin of the cap: the inverse taken with the wrong sign (x * -I), as a folded scale of the
// wrong sign would give.
Expr soft_cap_twin(const Expr& x, const Expr& cap, const Expr& inv_cap) { return D::mul(cap, D::tanh(D::mul(x, -inv_cap))); }

std::vector<Obligation> monotone_cap_obligations(z3::context& c, Variant v) {
  const Expr x1 = c.real_const("x1"), x2 = c.real_const("x2"), cap = c.real_const("C"), inv = c.real_const("I");
  const auto capped = [&](const Expr& x) {
    return v == Variant::shipped ? algo::soft_cap(x, cap, inv) : soft_cap_twin(x, cap, inv);
  };
  std::vector<Expr> base = tanh_axioms({x1 * inv, x2 * inv, x1 * -inv, x2 * -inv});
  base.insert(base.end(), {cap > 0, inv > 0});
  std::vector<Expr> ordered = base;
  ordered.push_back(x1 <= x2);
  return {{"the cap keeps the order of the logits", ordered, capped(x1) <= capped(x2)},
          {"a capped logit lies within (-C, C)", base, -cap < capped(x1) && capped(x1) < cap}};
}

std::vector<Obligation> max_first_obligations(z3::context& c, Variant v) {
  const Expr cap = c.real_const("C"), inv = c.real_const("I"), slope = c.real_const("slope");
  const Expr running = c.real_const("running_max");
  std::vector<Expr> x, dist, y, args;
  const char* const x_names[] = {"x0", "x1"};
  const char* const dist_names[] = {"d0", "d1"};
  for (int j = 0; j < 2; ++j) {
    x.push_back(c.real_const(x_names[j]));
    dist.push_back(c.real_const(dist_names[j]));
    args.push_back(x.back() * inv);
    y.push_back(algo::soft_cap(x.back(), cap, inv) + algo::alibi_bias(slope, dist.back()));
  }
  // The twin takes the block's maximum over the unmodified logits and modifies them after.
  const Expr block_max = v == Variant::shipped ? D::max(y[0], y[1]) : D::max(x[0], x[1]);
  const algo::Fa2Rescale<Expr> r = algo::fa2_rescale(running, block_max);
  std::vector<Expr> assume = tanh_axioms(args);
  // Any cap and inverse > 0, any slope (either sign) and distance >= 0; the running maximum is a
  // real (a row's earlier blocks; -inf has no real, theorem 6 covers it in fp32).
  assume.insert(assume.end(), {cap > 0, inv > 0, dist[0] >= 0, dist[1] >= 0});
  std::vector<Obligation> out;
  for (int j = 0; j < 2; ++j)
    out.push_back({"key " + std::to_string(j) + "'s weight argument y - offset is <= 0", assume,
                   y[j] - r.offset <= 0});
  return out;
}

}  // namespace

std::vector<ProofSpec> score_mod_proofs() {
  return {{"score_mod_monotone_cap",
           "soft_cap(x, C, I) = C tanh(x I) with C, I > 0 keeps the order of the logits and lies within (-C, C), "
           "for tanh monotone, odd and within (-1, 1); reals",
           "the cap's inverse taken with the wrong sign", monotone_cap_obligations},
          {"score_mod_max_first",
           "a row's logits modified by the cap and the ALiBi bias (algo::soft_cap, algo::alibi_bias) before "
           "fa2_rescale takes their maximum: every weight's argument is <= 0 for every cap, slope and distance; reals",
           "the maximum taken over the unmodified logits", max_first_obligations}};
}

}  // namespace flashproof::proofs
