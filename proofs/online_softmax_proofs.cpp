// Theorems 1-3 (docs/proofs.md): the online softmax in exact arithmetic, about the shipped
// kernels/algo/online_softmax.h instantiated over Z3 reals.
//
// Representation. Fix any real r (a free variable: the identities hold for every reference, which
// keeps max() out of them). A set of keys K with logits x_k (log2 units) and values v_k is described
// by A = sum_K 2^(x_k - r) and B = sum_K 2^(x_k - r) v_k; these sums do not depend on how K is split
// into blocks or in which order the blocks come. One accumulator element stands for all of them.
//   FA2 state (m, l, acc) represents (A, B) iff  l 2^(m-r) = A  and  acc 2^(m-r) = B.
//   FA1 state (m, l, O)   represents (A, B) iff  l 2^(m-r) = A >= 0,  O A = B,  and  A = 0 -> O = 0.
// Induction: the initial state represents the empty set, and one step over a block maps a state
// representing K to one representing K + block; inside a block the weight sums are built key by
// key, again by induction. So after any number of blocks of any sizes the state represents the
// keys seen, and the finalisation turns that into O = B / A and LSE = ln(A) + r ln 2, which are the
// softmax-weighted sum and the log-sum-exp.
// Over the reals there is no -inf: the initial max is an arbitrary real (l = 0 makes it
// irrelevant); the -inf guard and the identity (-inf, 0) are proved in fp_proofs.cpp.
#include <string>
#include <vector>

#include "kernels/algo/online_softmax.h"
#include "proofs/catalog.h"
#include "proofs/real_axioms.h"

namespace flashproof::proofs {
namespace {

using algo::exponent_offset;
using algo::shifted_exp2;

struct Reals {
  z3::context& c;
  z3::expr var(const std::string& name) const { return c.real_const(name.c_str()); }
};

// Meaning of an FA2 state.
z3::expr fa2_represents(const z3::expr& m, const z3::expr& l, const z3::expr& acc, const z3::expr& r,
                        const z3::expr& A, const z3::expr& B) {
  const z3::expr w = exp2_of(exponent_offset(m) - r);
  return l * w == A && acc * w == B;
}

// Meaning of an FA1 state.
z3::expr fa1_represents(const z3::expr& m, const z3::expr& l, const z3::expr& o, const z3::expr& r,
                        const z3::expr& A, const z3::expr& B) {
  const z3::expr w = exp2_of(exponent_offset(m) - r);
  return l * w == A && A >= 0 && o * A == B && z3::implies(A == 0, o == 0);
}

// A block's partial weight sums relative to an exponent offset: sum 2^(x - offset) and
// sum 2^(x - offset) v, for the keys of the block seen so far, describe (A_blk, B_blk).
z3::expr block_sums_represent(const z3::expr& offset, const z3::expr& sum, const z3::expr& weighted,
                              const z3::expr& r, const z3::expr& A, const z3::expr& B) {
  const z3::expr w = exp2_of(offset - r);
  return sum * w == A && weighted * w == B && A >= 0 && z3::implies(A == 0, B == 0);
}

// Inner induction: adding one key to a block's sums (the kernels' rowsum and P V over the block).
// The twin forgets to shift the weight (uses 2^x instead of 2^(x - offset)).
Obligation block_sum_step(Reals R, Variant variant) {
  const z3::expr off = R.var("offset"), r = R.var("r"), x = R.var("x"), v = R.var("v");
  const z3::expr sum = R.var("block_sum"), weighted = R.var("block_pv");
  const z3::expr A = R.var("A_blk"), B = R.var("B_blk");
  const z3::expr p = variant == Variant::shipped ? shifted_exp2(x, off) : exp2_of(x);
  const z3::expr A1 = A + exp2_of(x - r), B1 = B + exp2_of(x - r) * v;
  return {"block sums: one more key",
          {block_sums_represent(off, sum, weighted, r, A, B), exp2_add(x - off, off - r, x - r),
           exp2_positive(x - r), exp2_positive(off - r)},
          block_sums_represent(off, sum + p, weighted + p * v, r, A1, B1)};
}

Obligation block_sum_base(Reals R) {
  const z3::expr off = R.var("offset"), r = R.var("r"), zero = R.c.real_val(0);
  return {"block sums: empty block", {}, block_sums_represent(off, zero, zero, r, zero, zero)};
}

// ---- Theorem 1, FA2 form ----------------------------------------------------------------------

// Twin: the rescale factor dropped (l and acc carried over unscaled).
std::vector<Obligation> fa2_invariant(z3::context& c, Variant variant) {
  Reals R{c};
  std::vector<Obligation> out{block_sum_base(R), block_sum_step(R, Variant::shipped)};
  const z3::expr r = R.var("r"), m = R.var("m"), l = R.var("l"), acc = R.var("acc");
  const z3::expr A = R.var("A"), B = R.var("B"), zero = c.real_val(0);
  out.push_back({"initial state (l = 0, acc = 0) represents no key", {}, fa2_represents(m, zero, zero, r, zero, zero)});

  const z3::expr block_max = R.var("block_max"), sum = R.var("block_sum"), pv = R.var("block_pv");
  const z3::expr Ab = R.var("A_blk"), Bb = R.var("B_blk");
  const algo::Fa2Rescale<z3::expr> step = algo::fa2_rescale(m, block_max);
  const z3::expr factor = variant == Variant::shipped ? step.factor : c.real_val(1);
  const z3::expr l1 = algo::rescale_accumulate(l, factor, sum);
  const z3::expr acc1 = algo::rescale_accumulate(acc, factor, pv);
  out.push_back({"one block: state for K and block sums give the state for K + block",
                 {fa2_represents(m, l, acc, r, A, B), block_sums_represent(step.offset, sum, pv, r, Ab, Bb),
                  exp2_add(m - step.offset, step.offset - r, m - r), exp2_positive(m - r),
                  exp2_positive(step.offset - r)},
                 fa2_represents(step.max, l1, acc1, r, A + Ab, B + Bb)});
  return out;
}

// Finalisation of an FA2 state representing (A, B), with ln 2 and the LSE laws.
std::vector<Obligation> fa2_finalisation(z3::context& c, Variant variant) {
  Reals R{c};
  const z3::expr r = R.var("r"), m = R.var("m"), l = R.var("l"), acc = R.var("acc");
  const z3::expr A = R.var("A"), B = R.var("B"), ln2 = R.var("ln2");
  const algo::RowOutput<z3::expr> out = algo::finalize_row(m, l, ln2);
  // Twin: the final division forgotten (O = acc).
  const z3::expr o = variant == Variant::shipped ? acc * out.inv_sum : acc;
  const z3::expr w = exp2_of(m - r);
  const std::vector<z3::expr> facts{fa2_represents(m, l, acc, r, A, B), ln2 > 0, exp2_positive(m - r),
                                    ln_mul(l, w, A), ln_exp2(m - r, ln2)};
  std::vector<z3::expr> nonempty = facts;
  nonempty.push_back(A > 0);
  std::vector<z3::expr> empty = facts;
  empty.push_back(A == 0);
  empty.push_back(B == 0);
  return {{"row with visible keys: O = B / A", nonempty, o * A == B},
          {"row with visible keys: LSE = ln(A) + r ln 2", nonempty, out.lse == ln_of(A) + r * ln2},
          {"row without visible keys: O = 0, LSE = +inf", empty,
           o == 0 && out.lse == RealDomain::pos_inf(m)}};
}

// ---- Theorem 1, FA1 form ----------------------------------------------------------------------

// Twin: the block's factor 2^(block_max - m_new) dropped from its coefficient.
std::vector<Obligation> fa1_invariant(z3::context& c, Variant variant) {
  Reals R{c};
  std::vector<Obligation> out{block_sum_base(R), block_sum_step(R, Variant::shipped)};
  const z3::expr r = R.var("r"), m = R.var("m"), l = R.var("l"), o = R.var("O");
  const z3::expr A = R.var("A"), B = R.var("B"), zero = c.real_val(0);
  out.push_back({"initial state (l = 0, O = 0) represents no key", {}, fa1_represents(m, zero, zero, r, zero, zero)});

  const z3::expr block_max = R.var("block_max"), sum = R.var("block_sum"), pv = R.var("block_pv");
  const z3::expr Ab = R.var("A_blk"), Bb = R.var("B_blk");
  const z3::expr block_offset = exponent_offset(block_max);
  const algo::Fa1Combine<z3::expr> step = algo::fa1_combine(m, l, block_max, sum);
  const z3::expr offset = exponent_offset(step.max);
  const z3::expr coef_block =
      variant == Variant::shipped ? step.coef_block
                                  : z3::ite(step.sum == 0, zero, c.real_val(1) / step.sum);
  const z3::expr o1 = step.coef_old * o + coef_block * pv;
  const std::vector<z3::expr> facts{
      fa1_represents(m, l, o, r, A, B), block_sums_represent(block_offset, sum, pv, r, Ab, Bb),
      exp2_add(m - offset, offset - r, m - r), exp2_add(block_max - offset, offset - r, block_max - r),
      exp2_positive(m - r), exp2_positive(block_max - r), exp2_positive(offset - r),
      exp2_positive(m - offset), exp2_positive(block_max - offset)};
  // The conjuncts of fa1_represents for the new state, one query each (together they are slow).
  const z3::expr w1 = exp2_of(offset - r), A1 = A + Ab, B1 = B + Bb;
  out.push_back({"one block: new l represents K + block", facts, step.sum * w1 == A1 && A1 >= 0});
  out.push_back({"one block: new O represents K + block", facts, o1 * A1 == B1});
  out.push_back({"one block: O stays 0 while no key is visible", facts, z3::implies(A1 == 0, o1 == 0)});
  return out;
}

// ---- Theorem 2: FA1 and FA2 agree ---------------------------------------------------------------

// Both forms, after any partitions of the same keys, represent the same (A, B) (theorem 1), and
// their finalisations then give the same O and LSE. Twin: the FA2 side skips the final division.
std::vector<Obligation> fa1_equals_fa2(z3::context& c, Variant variant) {
  Reals R{c};
  const z3::expr r = R.var("r"), A = R.var("A"), B = R.var("B"), ln2 = R.var("ln2");
  const z3::expr m1 = R.var("m_fa1"), l1 = R.var("l_fa1"), o1 = R.var("O_fa1");
  const z3::expr m2 = R.var("m_fa2"), l2 = R.var("l_fa2"), acc2 = R.var("acc_fa2");
  const algo::RowOutput<z3::expr> out1 = algo::finalize_row(m1, l1, ln2);
  const algo::RowOutput<z3::expr> out2 = algo::finalize_row(m2, l2, ln2);
  const z3::expr o2 = variant == Variant::shipped ? acc2 * out2.inv_sum : acc2;
  const z3::expr w1 = exp2_of(m1 - r), w2 = exp2_of(m2 - r);
  const std::vector<z3::expr> facts{fa1_represents(m1, l1, o1, r, A, B), fa2_represents(m2, l2, acc2, r, A, B),
                                    A >= 0, z3::implies(A == 0, B == 0), ln2 > 0,
                                    exp2_positive(m1 - r), exp2_positive(m2 - r),
                                    ln_mul(l1, w1, A), ln_mul(l2, w2, A),
                                    ln_exp2(m1 - r, ln2), ln_exp2(m2 - r, ln2)};
  return {{"same O", facts, o1 == o2}, {"same LSE", facts, out1.lse == out2.lse}};
}

// ---- Theorem 3: merging partial states ----------------------------------------------------------

struct State {
  z3::expr m, l, acc;
};

// Twin: sums added without rescaling to the common max.
State merge(const State& a, const State& b, Variant variant) {
  const algo::StateMerge<z3::expr> s = algo::merge_states(a.m, a.l, b.m, b.l);
  if (variant == Variant::twin) return {s.max, a.l + b.l, a.acc + b.acc};
  return {s.max, s.sum, s.coef_a * a.acc + s.coef_b * b.acc};
}

State state(Reals R, const std::string& tag) {
  return {R.var("m_" + tag), R.var("l_" + tag), R.var("acc_" + tag)};
}

// Every exp2 law the merge proofs use: for each pair of terms the exponents that appear.
std::vector<z3::expr> merge_laws(const std::vector<z3::expr>& maxima, const std::vector<z3::expr>& refs) {
  std::vector<z3::expr> laws;
  for (const auto& a : maxima) {
    for (const auto& b : refs) {
      laws.push_back(exp2_positive(a - b));
      for (const auto& c : refs) laws.push_back(exp2_add(a - b, b - c, a - c));
    }
  }
  return laws;
}

std::vector<Obligation> merge_proofs(z3::context& c, Variant variant) {
  Reals R{c};
  const State a = state(R, "a"), b = state(R, "b"), d = state(R, "c");
  const z3::expr r = R.var("r");
  std::vector<Obligation> out;

  {  // Representation: merging states for disjoint K1, K2 gives the state for K1 + K2.
    const z3::expr A1 = R.var("A1"), B1 = R.var("B1"), A2 = R.var("A2"), B2 = R.var("B2");
    const State ab = merge(a, b, variant);
    std::vector<z3::expr> facts = merge_laws({a.m, b.m, ab.m}, {ab.m, r});
    facts.push_back(fa2_represents(a.m, a.l, a.acc, r, A1, B1));
    facts.push_back(fa2_represents(b.m, b.l, b.acc, r, A2, B2));
    const z3::expr w = exp2_of(exponent_offset(ab.m) - r);
    out.push_back({"merge of states for K1, K2 represents K1 + K2: l", facts, ab.l * w == A1 + A2});
    out.push_back({"merge of states for K1, K2 represents K1 + K2: acc", facts, ab.acc * w == B1 + B2});
  }
  {  // Commutative, exactly.
    const State ab = merge(a, b, variant), ba = merge(b, a, variant);
    out.push_back({"commutative", merge_laws({a.m, b.m}, {ab.m}),
                   ab.m == ba.m && ab.l == ba.l && ab.acc == ba.acc});
  }
  {  // Associative, exactly.
    const State ab = merge(a, b, variant), bc = merge(b, d, variant);
    const State left = merge(ab, d, variant), right = merge(a, bc, variant);
    // Equal l and acc: by the lemma above, both sides represent A1 + A2 + A3 (each merge of states
    // for K1, K2 represents K1 + K2), and they have the same max; a state is determined by its max
    // and what it represents. (Expanding the four merges in one query times out in Z3 4.8.12, so
    // the composition is done here, in these three steps.)
    out.push_back({"associative: max", {}, left.m == right.m});
    const State s1 = state(R, "1"), s2 = state(R, "2");
    const z3::expr A = R.var("A"), B = R.var("B");
    out.push_back({"associative: a state is determined by its max and what it represents",
                   {fa2_represents(s1.m, s1.l, s1.acc, r, A, B), fa2_represents(s2.m, s2.l, s2.acc, r, A, B),
                    s1.m == s2.m, exp2_positive(s1.m - r),
                    z3::implies(s1.m == s2.m, exp2_of(s1.m - r) == exp2_of(s2.m - r))},
                   s1.l == s2.l && s1.acc == s2.acc});
  }
  {  // Identity: an empty state (l = acc = 0, any max) changes what is represented by nothing.
    const z3::expr A = R.var("A"), B = R.var("B"), zero = c.real_val(0);
    const State empty{R.var("m_empty"), zero, zero};
    const State left = merge(empty, a, variant), right = merge(a, empty, variant);
    std::vector<z3::expr> facts = merge_laws({a.m, empty.m, left.m, right.m}, {left.m, right.m, r});
    facts.push_back(fa2_represents(a.m, a.l, a.acc, r, A, B));
    out.push_back({"identity (l = 0, acc = 0)", facts,
                   fa2_represents(left.m, left.l, left.acc, r, A, B) &&
                       fa2_represents(right.m, right.l, right.acc, r, A, B)});
  }
  return out;
}

}  // namespace

std::vector<ProofSpec> online_softmax_proofs() {
  return {
      {"online_softmax_fa2",
       "FA2 step (fa2_rescale, shifted_exp2, rescale_accumulate): the state after any number of blocks "
       "of any sizes represents exactly the keys seen; finalize_row gives O = softmax-weighted sum, "
       "LSE = log-sum-exp, and O = 0, LSE = +inf for a row without keys",
       "rescale factor dropped; final division dropped",
       [](z3::context& c, Variant v) {
         auto obs = fa2_invariant(c, v);
         for (auto& o : fa2_finalisation(c, v)) obs.push_back(std::move(o));
         return obs;
       }},
      {"online_softmax_fa1",
       "FA1 step (fa1_combine on block statistics from shifted_exp2): the normalised state after any "
       "number of blocks of any sizes represents exactly the keys seen (O = softmax-weighted sum, "
       "O = 0 without keys)",
       "the block's rescale factor dropped from its coefficient",
       fa1_invariant},
      {"fa1_equals_fa2",
       "FA1 and FA2 states for the same keys, under any block partitions, finalise to the same O and LSE",
       "FA2 output without the final division", fa1_equals_fa2},
      {"merge_states",
       "merge_states of partial states over disjoint keys represents their union, and is commutative, "
       "associative and has the empty state as identity, so any block order and any split-KV give the "
       "same result",
       "sums added without rescaling to the common max", merge_proofs},
  };
}

}  // namespace flashproof::proofs
