// Theorem 6: the shipped online-softmax and backward pieces (kernels/algo/online_softmax.h,
// softmax_backward.h), instantiated with z3::expr over fp32 with round-to-nearest-even, never produce
// NaN, keep weights and coefficients in range, keep the running state's invariant, and treat a fully
// masked row exactly.
//
// What is assumed of exp2 and ln: fp32_function_axioms.h (E1-E5, L1). The input domain and the
// running state's invariant: fp32_softmax_model.h. The twins: fp32_twins.h.
//
// Bit-blasted fp32 multipliers and dividers make naive queries slow (minutes for one FA1 step), so:
// exp2/ln applications become constants (Ackermann's reduction, pure QF_FP); each proof is a chain
// of small obligations whose proved goals later ones assume; lemmas about single operations are
// proved once per proof and instantiated (fp32_lemmas.h); and in the shipped variant proved
// intermediate terms are cut (fp32_chain.h). Twins keep the plain terms so that their
// counterexamples are genuine.
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/algo/online_softmax.h"
#include "kernels/algo/softmax_backward.h"
#include "proofs/catalog.h"
#include "proofs/fp32_chain.h"
#include "proofs/fp32_function_axioms.h"
#include "proofs/fp32_softmax_model.h"
#include "proofs/fp32_terms.h"
#include "proofs/fp32_twins.h"
#include "proofs/fp32_variants.h"

namespace flashproof::proofs {
namespace {

using namespace fp32;

// ---- a. FA2 step

std::vector<Obligation> fa2_step(z3::context& c, Variant variant, Mode mode) {
  const auto rescale = pick<Fa2RescaleFn>(variant, algo::fa2_rescale<expr>, fa2_rescale_factor_of_block_max);
  const expr m = f32_var(c, "m");
  const expr l = f32_var(c, "l");
  const Block block = make_block(f32_vars(c, "x"));
  const auto r = rescale(m, block.max);
  const auto p = weights(block, r.offset);
  const expr new_l = algo::rescale_accumulate(l, r.factor, sum(p));

  Chain step(c, mode, joined(block_domain(block), {state_domain(m, l)}));
  step.lemma(c, Lemma::difference);
  step.lemma(c, Lemma::weight_times_value);
  step.prove("new max -inf or finite, one of m and the logits; offset finite, the new max unless -inf",
             (is_neg_inf(r.max) || is_finite(r.max)) && one_of(r.max, joined<expr>({m}, block.logits)) &&
                 is_finite(r.offset) && z3::implies(is_finite(r.max), r.offset == r.max));
  step.prove("factor in [0,1], +0 for m = -inf, 1 when m stays the max", weight_ok(r.factor, m, r.max));
  for (int j = 0; j < kBlock; ++j) {
    const std::string x = block.logits[j].to_string();
    step.prove("weight of " + x + " in [0,1], +0 for " + x + " = -inf, 1 when " + x + " is the new max",
               weight_ok(p[j], block.logits[j], r.max));
  }
  step.cut(r.factor, "factor");
  for (int j = 0; j < kBlock; ++j) step.cut(p[j], "weight_of_" + block.logits[j].to_string());
  step.prove("new l finite, +0 or positive", nonnegative(new_l) && is_finite(new_l));
  step.prove("new max -inf gives new l = +0", z3::implies(is_neg_inf(r.max), plus_zero(new_l)));
  step.prove("new max finite gives new l >= 1", z3::implies(is_finite(r.max), f32(c, 1.0f) <= new_l));

  const expr factor = f32_var(c, "factor");
  const expr acc = f32_var(c, "acc");
  const expr added = f32_var(c, "added");
  Chain element(c, mode, {in_unit(factor), within(acc, 0x1p100f), within(added, 0x1p100f)});
  element.prove("accumulator factor*acc + added finite for factor in [0,1], |acc|,|added| <= 2^100",
                is_finite(algo::rescale_accumulate(acc, factor, added)));
  return joined(step.take(), element.take());
}

// ---- b. FA1 step

// The block statistics are proved to form a running state (block_max, block_sum) in the state
// domain; fa1_combine is then proved for any two such states. The intermediate terms of
// fa1_combine are rebuilt from the same calls (hence are the same terms) to state facts about them
// and cut them.
std::vector<Obligation> fa1_step(z3::context& c, Variant variant, Mode mode) {
  const auto combine = pick<Fa1CombineFn>(variant, algo::fa1_combine<expr>, fa1_combine_unguarded);
  const Block block = make_block(f32_vars(c, "x"));
  const expr block_sum = sum(weights(block, algo::exponent_offset(block.max)));
  Chain statistics(c, mode, block_domain(block));
  statistics.lemma(c, Lemma::difference);
  statistics.prove("block statistics form a state: block_max -inf or finite, block_sum in [+0, " +
                       std::to_string(kBlock) + "], invariant",
                   state_domain(block.max, block_sum) && block_sum <= f32(c, kBlock));

  const expr m = f32_var(c, "m");
  const expr l = f32_var(c, "l");
  const expr bm = f32_var(c, "block_max");
  const expr bs = f32_var(c, "block_sum");
  const auto r = combine(m, l, bm, bs);
  const expr offset = algo::exponent_offset(r.max);
  const expr old_factor = algo::shifted_exp2(m, offset);
  const expr block_factor = algo::shifted_exp2(bm, offset);
  const expr old_part = D::mul(old_factor, l);
  const expr block_part = D::mul(block_factor, bs);
  const expr inverse = r.coef_block.arg(2);  // the selected 1/l, from mul(block_factor, inverse)
  const auto part_ok = [&](const expr& part, const expr& factor, const expr& value) {
    return nonnegative(part) && part <= f32(c, 0x1p102f) && z3::implies(is_one(factor), part == value) &&
           z3::implies(plus_zero(factor), plus_zero(part));
  };
  const auto coefficient_ok = [](const expr& k) { return nonnegative(k) && is_finite(k); };

  Chain step(c, mode, {state_domain(m, l), state_domain(bm, bs)});
  step.reuse(Lemma::difference);
  step.lemma(c, Lemma::weight_times_value);
  step.lemma(c, Lemma::value_times_weight);
  step.lemma(c, Lemma::reciprocal);
  step.prove("new max -inf or finite, one of m and block_max",
             (is_neg_inf(r.max) || is_finite(r.max)) && one_of(r.max, {m, bm}));
  step.prove("old factor in [0,1], +0 for m = -inf, 1 when m is the new max", weight_ok(old_factor, m, r.max));
  step.prove("block factor in [0,1], +0 for block_max = -inf, 1 when it is the new max",
             weight_ok(block_factor, bm, r.max));
  step.cut(old_factor, "old_factor");
  step.cut(block_factor, "block_factor");
  step.prove("old part factor*l in [+0, 2^102], l for factor 1, +0 for factor +0", part_ok(old_part, old_factor, l));
  step.prove("block part factor*block_sum in [+0, 2^102], block_sum for factor 1, +0 for factor +0",
             part_ok(block_part, block_factor, bs));
  step.cut(old_part, "old_part");
  step.cut(block_part, "block_part");
  step.prove("new l +0 or positive, at most 2^110", nonnegative(r.sum) && within(r.sum, 0x1p110f));
  step.prove("new max -inf gives new l = +0", z3::implies(is_neg_inf(r.max), plus_zero(r.sum)));
  step.prove("new max finite gives new l >= 1", z3::implies(is_finite(r.max), f32(c, 1.0f) <= r.sum));
  step.cut(r.sum, "new_l");
  step.prove("selected inverse of new l in [0,1], +0 for new l = 0",
             in_unit(inverse) && z3::implies(r.sum.mk_is_zero(), plus_zero(inverse)));
  step.cut(inverse, "inverse");
  step.prove("coef_old finite and >= 0", coefficient_ok(r.coef_old));
  step.prove("coef_block finite and >= 0", coefficient_ok(r.coef_block));
  step.prove("new l = 0 gives both coefficients 0",
             z3::implies(r.sum.mk_is_zero(), r.coef_old.mk_is_zero() && r.coef_block.mk_is_zero()));
  return joined(statistics.take(), step.take());
}

// ---- c. fully masked row, and merging with the empty state

std::vector<Obligation> masked_row(z3::context& c, Variant variant, Mode mode) {
  const auto rescale = pick<Fa2RescaleFn>(variant, algo::fa2_rescale<expr>, fa2_rescale_unguarded);
  const expr empty_max = neg_inf(c);
  const expr zero = f32(c, 0.0f);
  const Block block = make_block(std::vector<expr>(kBlock, neg_inf(c)));
  const auto v = f32_vars(c, "v");

  const auto r = rescale(empty_max, block.max);
  const auto p = weights(block, r.offset);
  const expr fa2_l = algo::rescale_accumulate(zero, r.factor, sum(p));
  const expr fa2_acc = algo::rescale_accumulate(zero, r.factor, dot(p, v));

  const auto pt = weights(block, algo::exponent_offset(block.max));
  const auto r1 = algo::fa1_combine(empty_max, zero, block.max, sum(pt));
  const expr fa1_o = D::mul(r1.coef_old, zero) + D::mul(r1.coef_block, dot(pt, v));

  Chain rows(c, mode, {for_all(v, is_finite)});
  rows.prove("FA2: (-inf, +0, 0) after a masked block is (-inf, +0, 0)",
             r.max == empty_max && plus_zero(fa2_l) && fa2_acc.mk_is_zero());
  rows.prove("FA1: (-inf, +0, 0) after a masked block is (-inf, +0, 0)",
             r1.max == empty_max && plus_zero(r1.sum) && fa1_o.mk_is_zero());

  const expr m = f32_var(c, "m");
  const expr l = f32_var(c, "l");
  const auto left = algo::merge_states(neg_inf(c), zero, m, l);
  const auto right = algo::merge_states(m, l, neg_inf(c), zero);
  Chain merges(c, mode, {state_domain(m, l)});
  merges.lemma(c, Lemma::weight_times_value);
  for (const auto& [name, s, coef_state, coef_empty] :
       {std::tuple{"merge_states(empty, s)", left, left.coef_b, left.coef_a},
        std::tuple{"merge_states(s, empty)", right, right.coef_a, right.coef_b}}) {
    merges.prove(std::string(name) + ": max and coefficients 1 (m finite) and 0",
                 s.max == m && coef_empty.mk_is_zero() && z3::implies(is_finite(m), is_one(coef_state)));
    merges.prove(std::string(name) + ": sum = l bitwise", s.sum == l);
  }
  return joined(rows.take(), merges.take());
}

// ---- c'. finalisation

std::vector<Obligation> finalize(z3::context& c, Variant variant, Mode mode) {
  const auto finalize_row = pick<FinalizeFn>(variant, algo::finalize_row<expr>, finalize_row_unguarded);
  const expr ln2 = D::lit(std::numbers::ln2, f32(c, 0.0f));
  const auto empty = finalize_row(neg_inf(c), f32(c, 0.0f), ln2);
  Chain empty_row(c, mode, {});
  empty_row.prove("empty row (-inf, +0): inv_sum = +0, lse = +inf",
                  plus_zero(empty.inv_sum) && empty.lse == pos_inf(c));

  const expr m = f32_var(c, "m");
  const expr l = f32_var(c, "l");
  const auto row = finalize_row(m, l, ln2);
  Chain full_row(c, mode, {within(m, 0x1p100f), within(l, 0x1p100f), f32(c, 1.0f) <= l});
  full_row.lemma(c, Lemma::reciprocal);
  full_row.prove("row with |m| <= 2^100, l in [1, 2^100]: inv_sum in (0,1]",
                 in_unit(row.inv_sum) && !row.inv_sum.mk_is_zero());
  full_row.prove("row with |m| <= 2^100, l in [1, 2^100]: lse finite", is_finite(row.lse));
  return joined(empty_row.take(), full_row.take());
}

// ---- d. backward

std::vector<Obligation> backward_prob(z3::context& c, Variant variant, Mode mode) {
  const auto recompute = pick<RecomputeFn>(variant, algo::recompute_prob<expr>, recompute_prob_unclamped);
  const expr x = f32_var(c, "x");
  const expr lse = f32_var(c, "lse");
  const expr log2e = D::lit(std::numbers::log2e, x);
  Chain prob(c, mode, {logit_domain(x), lse == pos_inf(c) || within(lse, 0x1p100f)});
  prob.prove("recompute_prob(x, lse_log2(lse, log2e)) in [0,1] for x -inf or |x| <= 2^66, lse +inf or "
             "|lse| <= 2^100",
             in_unit(recompute(x, algo::lse_log2(lse, log2e))));

  const expr p = f32_var(c, "p");
  const expr dp = f32_var(c, "dp");
  const expr d = f32_var(c, "d");
  Chain grad(c, mode, {in_unit(p), within(dp, 0x1p100f), within(d, 0x1p100f)});
  grad.prove("softmax_grad(p, dp, d) finite for p in [0,1], |dp|,|d| <= 2^100",
             is_finite(algo::softmax_grad(p, dp, d)));
  return joined(prob.take(), grad.take());
}

std::string statement(const std::string& what) { return what + kAssumedProperties; }

}  // namespace

std::vector<ProofSpec> fp_proofs() {
  const std::string block = std::to_string(kBlock) + " logits (-inf or |x|<=2^66)";
  return {
      {"fp_fa2_step",
       statement("fp32: an FA2 step (fa2_rescale, shifted_exp2, rescale_accumulate) on " + block +
                 " and a state (m -inf or |m|<=2^100, l in [+0,2^100], m=-inf => l=+0, m finite => l>=1) has "
                 "no NaN, factor and weights in [0,1], factor +0 for an empty state and 1 when the max stays, "
                 "new l finite with the invariant kept; factor*acc+added is finite for factor in [0,1]."),
       "the rescale factor taken from the block max (shifted_exp2(block_max, offset)): not 1 when the "
       "running max stays, and the new l can fall below 1",
       build_variant<fa2_step>},
      {"fp_fa1_step",
       statement("fp32: an FA1 step (block statistics of " + block +
                 " from exponent_offset(block_max), then fa1_combine) on a state as in fp_fa2_step has no NaN, "
                 "finite nonnegative coefficients, both 0 when the new l is 0, new l finite with the invariant "
                 "kept."),
       "fa1_combine without the l = 0 test: a fully masked row gets 1/0 = +inf and NaN coefficients (0 * inf)",
       build_variant<fa1_step>},
      {"fp_masked_row",
       statement("fp32: from (-inf, +0, 0) a block of " + std::to_string(kBlock) +
                 " -inf logits leaves (-inf, +0, 0) in the FA2 and FA1 forms; merge_states with the empty "
                 "state (-inf, +0) on either side returns the other state bitwise with coefficients 1 (m "
                 "finite) and 0."),
       "fa2_rescale without exponent_offset's -inf guard: -inf - (-inf) = NaN in the weights of a fully "
       "masked block",
       build_variant<masked_row>},
      {"fp_finalize_row",
       statement("fp32: finalize_row(-inf, +0, ln2) gives inv_sum = +0 and lse = +inf; for |m|<=2^100 and l "
                 "in [1,2^100] it gives inv_sum in (0,1] and a finite lse."),
       "finalize_row without the empty-row test: the empty row gets inv_sum = 1/0 = +inf",
       build_variant<finalize>},
      {"fp_backward_prob",
       statement("fp32: recompute_prob(x, lse_log2(lse, log2e)) is in [0,1] for x -inf or |x|<=2^66 and lse "
                 "+inf or |lse|<=2^100; softmax_grad(p, dp, d) is finite for p in [0,1], |dp|,|d|<=2^100."),
       "recompute_prob without the clamp at 0: a positive argument lets exp2 exceed 1",
       build_variant<backward_prob>},
  };
}

}  // namespace flashproof::proofs
