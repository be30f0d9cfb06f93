// Theorem 4 (docs/proofs.md): the backward pass's softmax identities in exact arithmetic, about
// kernels/algo/softmax_backward.h (recompute_prob, lse_log2, row_dot_step, softmax_grad) and the forward's
// finalize_row, instantiated over Z3 reals. Sums over keys and over the head dimension are handled
// by induction (one key / one coordinate per step), so the identities hold for any sizes.
#include <string>
#include <vector>

#include "kernels/algo/online_softmax.h"
#include "kernels/algo/softmax_backward.h"
#include "proofs/catalog.h"
#include "proofs/real_axioms.h"

namespace flashproof::proofs {
namespace {

z3::expr real(z3::context& c, const char* name) { return c.real_const(name); }

// P recomputed from the stored LSE is the softmax weight: with the forward state (m, l) of a row
// representing A = sum_k 2^(x_k - r) (theorem 1) and x one of the row's logits, P A = 2^(x - r).
// Twin: P recomputed from the row max instead of the LSE (normalisation forgotten).
std::vector<Obligation> prob_from_lse(z3::context& c, Variant variant) {
  const z3::expr r = real(c, "r"), m = real(c, "m"), l = real(c, "l"), acc = real(c, "acc");
  const z3::expr A = real(c, "A"), B = real(c, "B"), x = real(c, "x");
  const z3::expr ln2 = real(c, "ln2"), log2e = real(c, "log2e");
  const z3::expr lse = algo::finalize_row(m, l, ln2).lse;
  const z3::expr lse2 = algo::lse_log2(lse, log2e);
  const z3::expr p = algo::recompute_prob(x, variant == Variant::shipped ? lse2 : m);
  const z3::expr w = exp2_of(m - r);
  const z3::expr arg = x - lse2;
  const z3::expr log2_A = ln_of(A) * log2e;
  const std::vector<z3::expr> facts{
      w * l == A, acc * w == B, A > 0,            // the forward state represents the row's keys
      exp2_positive(x - r), exp2_of(x - r) <= A,  // x is one of them: its own term is part of A
      ln2 > 0, ln2 * log2e == 1, exp2_positive(m - r), ln_mul(l, w, A), ln_exp2(m - r, ln2),
      exp2_log2(A, log2e), exp2_add(arg, log2_A, x - r), exp2_above_one(arg),
      // the twin's argument
      exp2_add(x - m, m - r, x - r), exp2_above_one(x - m)};
  return {{"P = exp2(x - LSE log2 e) is the softmax weight 2^(x - r) / A", facts, p * A == exp2_of(x - r)}};
}

// D = rowsum(dO * O) = sum_j P_j dP_j with O = sum_j P_j v_j and dP_j = dO . v_j, where D is what
// the backward's preprocess computes: algo::row_dot_step folded over the head-dim coordinates
// (kernels/flash/backward_key_block.h). Induction over the keys j (outer) and the coordinates
// (inner); dO.O and dO.(O + P v) are the kernel's fold, dP_j = dO.v the exact dot product (the
// gradient's definition). Twin: a step that adds O's coordinate without dO's weight.
std::vector<Obligation> rowsum_identity(z3::context& c, Variant variant) {
  const auto step = [variant](const z3::expr& dot, const z3::expr& dout, const z3::expr& o) {
    return variant == Variant::shipped ? algo::row_dot_step(dot, dout, o) : dot + o;
  };
  const z3::expr p = real(c, "P_j"), g = real(c, "dO_k"), o = real(c, "O_k"), v = real(c, "v_jk");
  const z3::expr X = real(c, "dot_dO_Onext"), Y = real(c, "dot_dO_O"), Z = real(c, "dot_dO_v");
  const z3::expr zero = c.real_val(0);
  // Inner: after the first coordinates, the folds satisfy dO.(O + P v) = dO.O + P (dO.v).
  Obligation coordinate_base{"coordinate base: the empty folds, 0 = 0 + P 0", {}, zero == zero + p * zero};
  Obligation coordinate{"coordinate step: row_dot_step keeps dO.(O + P v) = dO.O + P dO.v",
                        {X == Y + p * Z},
                        step(X, g, o + p * v) == step(Y, g, o) + p * (Z + g * v)};
  // Outer: D_t = dO.O_t equals S_t = sum_{j<=t} P_j dP_j; add key t+1 (using the inner result).
  const z3::expr D = real(c, "D_t"), S = real(c, "S_t"), dot_next = real(c, "dot_dO_O_next");
  const z3::expr dp = real(c, "dP_j");
  Obligation key{"key step: D_{t+1} = S_{t+1}", {D == S, dot_next == D + p * dp}, dot_next == S + p * dp};
  // The outer base case is the empty sum over keys (0 = 0) and needs no query.
  return {coordinate_base, coordinate, key};
}

// dS_j = softmax_grad(P_j, dP_j, D) is the gradient of sum_i dP_i P_i with respect to the logit s_j,
// where P_i = e_i / Z, e_i = exp(s_i), Z = sum_i e_i. The Jacobian comes from the quotient rule with
// d e_i / d s_j = [i = j] e_i and d Z / d s_j = e_j: dP_i/ds_j = ([i = j] e_i Z - e_i e_j) / Z^2.
// Induction over i: G_t = sum_{i<=t} dP_i dP_i/ds_j equals P_j dP_j [j <= t] - P_j D_t with
// D_t = sum_{i<=t} P_i dP_i. Twin: softmax_grad without D.
std::vector<Obligation> softmax_gradient(z3::context& c, Variant variant) {
  const z3::expr Z = real(c, "Z"), ej = real(c, "e_j"), ei = real(c, "e_i");
  const z3::expr dpj = real(c, "dP_j"), dpi = real(c, "dP_i");
  const z3::expr G = real(c, "G_t"), D = real(c, "D_t");
  const z3::expr Pj = ej / Z, Pi = ei / Z;
  const z3::expr zero = c.real_val(0), one = c.real_val(1);
  const std::vector<z3::expr> positive{Z > 0, ej > 0, ei > 0};
  const auto invariant = [&](const z3::expr& g, const z3::expr& d, const z3::expr& seen) {
    return g == Pj * dpj * seen - Pj * d;
  };
  std::vector<z3::expr> before_j = positive;
  before_j.push_back(invariant(G, D, zero));
  std::vector<z3::expr> after_j = positive;
  after_j.push_back(invariant(G, D, one));
  const z3::expr off_diagonal = dpi * (-(ei * ej) / (Z * Z));
  const z3::expr diagonal = dpj * ((ej * Z - ej * ej) / (Z * Z));
  const z3::expr grad = variant == Variant::shipped ? algo::softmax_grad(Pj, dpj, D) : Pj * dpj;
  return {
      {"base: no term yet", positive, invariant(zero, zero, zero)},
      {"step i != j before j", before_j, invariant(G + off_diagonal, D + Pi * dpi, zero)},
      {"step i != j after j", after_j, invariant(G + off_diagonal, D + Pi * dpi, one)},
      {"step i = j", before_j, invariant(G + diagonal, D + Pj * dpj, one)},
      {"end: gradient = softmax_grad(P_j, dP_j, D)", after_j, G == grad},
  };
}

}  // namespace

std::vector<ProofSpec> backward_proofs() {
  return {
      {"backward_prob",
       "recompute_prob(x, lse_log2(LSE)) with the LSE of finalize_row equals the softmax weight of x",
       "P recomputed from the row max instead of the LSE", prob_from_lse},
      {"backward_rowsum",
       "D = row_dot_step folded over dO and O equals sum_j P_j dP_j, any number of keys and head dim",
       "row_dot_step adds O without dO's weight", rowsum_identity},
      {"backward_softmax_grad",
       "softmax_grad(P, dP, D) = P (dP - D) is the gradient through the softmax, for any number of keys",
       "D dropped from softmax_grad", softmax_gradient},
  };
}

}  // namespace flashproof::proofs
