// Theorem 6: the shipped online-softmax and backward pieces (kernels/algo/online_softmax.h,
// softmax_backward.h), instantiated with z3::expr over fp32 with round-to-nearest-even, never produce
// NaN, keep weights and coefficients in range, keep the running state's invariant, and treat a fully
// masked row exactly.
//
// exp2 and ln are uninterpreted (proofs/z3_domain.h). Every query gets, for each application in it,
// ground instances of these properties of the hardware approximation ex2.approx.ftz.f32 and of logf
// (the host's std::exp2 and std::log rounded to float satisfy them as well):
//   E1  exp2(-inf) = +0
//   E2  exp2(+0) = exp2(-0) = 1
//   E3  x not NaN  =>  exp2(x) is not NaN, is +0 or positive (never -0: ftz underflow gives +0),
//                      and is +inf only if x > 0
//   E4  x not NaN, x <= 0  =>  exp2(x) <= 1
//   E5  x, y not NaN, x <= y  =>  exp2(x) <= exp2(y)   (each pair of applications in the query)
//   L1  l finite, l >= 1  =>  ln(l) finite, |ln(l)| <= 128   (the true value is below 89)
// Nothing is assumed about exp2(NaN) or about ln elsewhere.
//
// Input domain: logits in log2 units are -inf (masked) or finite with |x| <= 2^66 (the spec's
// |softmax_scale * q.k| <= 2^64 times log2(e) < 2). A running state (m, l) has m = -inf or
// |m| <= 2^100, l finite in [+0, 2^100] with its sign bit clear, and the invariant
//   m = -inf  =>  l = +0        (no visible key yet; the accumulator is 0 as well)
//   m finite  =>  l >= 1        (the max's own weight is exp2(+0) = 1)
// which the FA2 and FA1 steps are proved to preserve (and the initial state (-inf, +0) and a block's
// own statistics satisfy). The second half is needed: without it, a subnormal new l in fa1_combine
// gives 1/l = +inf and a coefficient +inf or 0 * inf = NaN.
//
// Bit-blasted fp32 multipliers and dividers make naive queries slow (minutes for one FA1 step), so:
// exp2/ln applications become constants (Ackermann's reduction, pure QF_FP); each proof is a chain
// of small obligations whose proved goals later ones assume; lemmas about single operations are
// proved once per proof and instantiated; and in the shipped variant proved intermediate terms are
// cut (see Mode and Chain). Twins keep the plain terms so that their counterexamples are genuine.
#include <algorithm>
#include <functional>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/algo/online_softmax.h"
#include "kernels/algo/softmax_backward.h"
#include "proofs/catalog.h"
#include "proofs/z3_domain.h"

namespace flashproof::proofs {
namespace {

using z3::expr;
using D = algo::Domain<expr>;

constexpr int kBlock = 2;  // logits per key block

const char* const kAssumed =
    " Assumed per application: exp2(-inf)=+0; exp2(+-0)=1; x not NaN => exp2(x) not NaN, +0 or "
    "positive, +inf only if x>0; x<=0 => exp2(x)<=1; x<=y => exp2(x)<=exp2(y); finite l>=1 => "
    "ln(l) finite, |ln(l)|<=128.";

// ---- fp32 vocabulary

z3::sort f32_sort(z3::context& c) { return c.fpa_sort(8, 24); }
expr f32(z3::context& c, float v) { return c.fpa_val(v); }
expr f32_var(z3::context& c, const std::string& name) { return c.constant(name.c_str(), f32_sort(c)); }
expr neg_inf(z3::context& c) { return c.fpa_inf(f32_sort(c), true); }
expr pos_inf(z3::context& c) { return c.fpa_inf(f32_sort(c), false); }

expr is_nan(const expr& x) { return x.mk_is_nan(); }
expr is_finite(const expr& x) { return !x.mk_is_nan() && !x.mk_is_inf(); }
expr is_neg_inf(const expr& x) { return D::is_neg_inf(x); }
expr sign_negative(const expr& x) { return expr(x.ctx(), Z3_mk_fpa_is_negative(x.ctx(), x)); }
// +0 or positive; fp.leq(0, x) would admit -0 too.
expr nonnegative(const expr& x) { return !is_nan(x) && !sign_negative(x); }
expr in_unit(const expr& x) { return nonnegative(x) && x <= f32(x.ctx(), 1.0f); }
expr within(const expr& x, float bound) {
  return is_finite(x) && f32(x.ctx(), -bound) <= x && x <= f32(x.ctx(), bound);
}
expr plus_zero(const expr& x) { return x == f32(x.ctx(), 0.0f); }  // `==` is bitwise: not -0
expr is_one(const expr& x) { return x == f32(x.ctx(), 1.0f); }

expr for_all(const std::vector<expr>& xs, const std::function<expr(const expr&)>& pred) {
  expr r = xs.front().ctx().bool_val(true);
  for (const auto& x : xs) r = r && pred(x);
  return r;
}

template <class T>
std::vector<T> joined(std::vector<T> a, std::vector<T> b) {
  for (auto& x : b) a.push_back(std::move(x));
  return a;
}

// ---- input domain

expr logit_domain(const expr& x) { return is_neg_inf(x) || within(x, 0x1p66f); }

expr state_invariant(const expr& m, const expr& l) {
  return z3::implies(is_neg_inf(m), plus_zero(l)) && z3::implies(is_finite(m), f32(m.ctx(), 1.0f) <= l);
}

expr state_domain(const expr& m, const expr& l) {
  return (is_neg_inf(m) || within(m, 0x1p100f)) && nonnegative(l) && within(l, 0x1p100f) &&
         state_invariant(m, l);
}

// ---- applications of exp2 and ln, and their properties

bool is_op(const expr& e, Z3_decl_kind kind) { return e.is_app() && e.decl().decl_kind() == kind; }

// Every subterm of the roots satisfying `wanted`, each once, arguments before the term.
std::vector<expr> subterms(const std::vector<expr>& roots, const std::function<bool(const expr&)>& wanted) {
  std::unordered_set<unsigned> seen;
  std::vector<expr> out;
  std::function<void(const expr&)> walk = [&](const expr& e) {
    if (!e.is_app() || !seen.insert(e.id()).second) return;
    for (unsigned i = 0; i < e.num_args(); ++i) walk(e.arg(i));
    if (wanted(e)) out.push_back(e);
  };
  for (const auto& r : roots) walk(r);
  return out;
}

std::vector<expr> applications(const std::vector<expr>& roots, const std::string& name) {
  return subterms(roots, [&](const expr& e) {
    return is_op(e, Z3_OP_UNINTERPRETED) && e.num_args() == 1 && e.decl().name().str() == name;
  });
}

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

// Each application becomes a constant NAME[k].out, its argument is named NAME[k].in (Ackermann's
// reduction: with the consistency instances the query is equisatisfiable). Without uninterpreted
// functions the query is pure QF_FP, which Z3 bit-blasts eagerly; with them its SMT core handled
// FP lazily and timed out. The names make counterexample models readable.
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

// "assumptions imply goal", with the exp2 and ln properties of the applications in it.
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

// ---- arithmetic lemmas

// Bit-blasted multipliers, dividers and adders are what make the queries slow. These lemmas about
// single operations are proved on free operands by their own small obligations, then instantiated
// for every matching operation in the later obligations of the same proof, which then need no
// search through the circuits. An instance is a true statement about IEEE arithmetic, so it only
// removes models that cannot exist: outcomes do not change, and a counterexample is still one of
// the plain query (proof.cpp checks it against all assumptions).
enum class Lemma { weight_times_value, value_times_weight, reciprocal, difference };

// A nonnegative value scaled by a weight in [0,1]: +0 or positive, at most 4 times the value's bound
// (a bound on exponents only; the tight bound "at most the value" costs 20x more), exact for
// weights 1 and +0. Two bounds, for values and for products of values.
expr scaled_by_weight(const expr& weight, const expr& value, const expr& product) {
  z3::context& c = weight.ctx();
  const auto bounded = [&](float v_bound) {
    return z3::implies(value <= f32(c, v_bound), product <= f32(c, 4 * v_bound));
  };
  return z3::implies(in_unit(weight) && nonnegative(value) && is_finite(value),
                     nonnegative(product) && bounded(0x1p100f) && bounded(0x1p110f) &&
                         z3::implies(is_one(weight), product == value) &&
                         z3::implies(plus_zero(weight), plus_zero(product)));
}

// The reciprocal of a finite l >= 1 lies in (0, 1].
expr reciprocal_in_unit(const expr& l, const expr& inv) {
  return z3::implies(is_finite(l) && f32(l.ctx(), 1.0f) <= l, in_unit(inv) && !inv.mk_is_zero());
}

// a - b for a <= b and b finite: not NaN, <= 0, -inf for a = -inf, a zero for a = b.
expr nonpositive_difference(const expr& a, const expr& b, const expr& difference) {
  return z3::implies(is_finite(b) && !is_nan(a) && a <= b,
                     !is_nan(difference) && difference <= f32(a.ctx(), 0.0f) &&
                         z3::implies(is_neg_inf(a), is_neg_inf(difference)) &&
                         z3::implies(a == b, difference.mk_is_zero()));
}

// The lemma for one operation term, or nothing when the term is not of the lemma's kind. The
// lemmas are proved with the context's rounding mode (round to nearest even).
std::optional<expr> lemma_instance(Lemma lemma, const expr& e) {
  if (e.num_args() != 3 || !z3::eq(e.arg(0), e.ctx().fpa_rounding_mode())) return std::nullopt;
  switch (lemma) {
    case Lemma::weight_times_value:
      if (is_op(e, Z3_OP_FPA_MUL)) return scaled_by_weight(e.arg(1), e.arg(2), e);
      break;
    case Lemma::value_times_weight:
      if (is_op(e, Z3_OP_FPA_MUL)) return scaled_by_weight(e.arg(2), e.arg(1), e);
      break;
    case Lemma::reciprocal:
      if (is_op(e, Z3_OP_FPA_DIV) && z3::eq(e.arg(1), f32(e.ctx(), 1.0f))) return reciprocal_in_unit(e.arg(2), e);
      break;
    case Lemma::difference:
      if (is_op(e, Z3_OP_FPA_SUB)) return nonpositive_difference(e.arg(1), e.arg(2), e);
      break;
  }
  return std::nullopt;
}

// The lemma's own obligation, on free operands.
Obligation lemma_obligation(z3::context& c, Lemma lemma) {
  const expr a = f32_var(c, "a");
  const expr b = f32_var(c, "b");
  switch (lemma) {
    case Lemma::weight_times_value:
      return obligation("lemma: a*b for a in [0,1], b >= 0 finite: >= 0, <= 4*bound(b), exact for a = 1, +0", {},
                        scaled_by_weight(a, b, D::mul(a, b)));
    case Lemma::value_times_weight:
      return obligation("lemma: b*a for a in [0,1], b >= 0 finite: >= 0, <= 4*bound(b), exact for a = 1, +0", {},
                        scaled_by_weight(a, b, D::mul(b, a)));
    case Lemma::reciprocal:
      return obligation("lemma: 1/a in (0,1] for finite a >= 1", {}, reciprocal_in_unit(a, D::div(f32(c, 1.0f), a)));
    case Lemma::difference:
      return obligation("lemma: a - b for a <= b, b finite: not NaN, <= 0, -inf for a = -inf, 0 for a = b", {},
                        nonpositive_difference(a, b, a - b));
  }
  throw std::logic_error("unknown lemma");
}

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

  void lemma(z3::context& c, Lemma lemma) {
    if (mode_.kind == Mode::Kind::proof) obligations_.push_back(lemma_obligation(c, lemma));
    reuse(lemma);
  }

  // A lemma proved by an earlier chain of the same proof.
  void reuse(Lemma lemma) { lemmas_.push_back(lemma); }

  void cut(const expr& term, const std::string& name) {
    if (mode_.kind != Mode::Kind::proof) return;
    cut_terms_.push_back(term);
    cut_constants_.push_back(term.ctx().constant(name.c_str(), term.get_sort()));
  }

  void prove(std::string name, const expr& goal) {
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

  std::vector<Obligation> take() { return std::move(obligations_); }

 private:
  bool trusted(const expr& fact) const {
    if (mode_.kind != Mode::Kind::refutation) return true;
    const auto& proved = *mode_.shipped_goals;
    return std::any_of(proved.begin(), proved.end(), [&](const expr& g) { return z3::eq(g, fact); });
  }

  expr with_cuts(const expr& e) {
    if (cut_terms_.empty()) return e;
    expr copy = e;  // substitute is not const
    return copy.substitute(cut_terms_, cut_constants_);
  }

  Mode mode_;
  std::vector<expr> domain_;
  std::vector<expr> facts_;  // as proved, before cuts
  std::vector<Lemma> lemmas_;
  z3::expr_vector cut_terms_;
  z3::expr_vector cut_constants_;
  std::vector<Obligation> obligations_;
};

// ---- key blocks

struct Block {
  std::vector<expr> logits;
  expr max;
};

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

// ---- twins: local copies of shipped functions, each with exactly one change

using Fa2RescaleFn = algo::Fa2Rescale<expr> (*)(expr, expr);
using Fa1CombineFn = algo::Fa1Combine<expr> (*)(expr, expr, expr, expr);
using FinalizeFn = algo::RowOutput<expr> (*)(expr, expr, expr);
using RecomputeFn = expr (*)(expr, expr);

template <class Fn>
Fn pick(Variant v, Fn shipped, Fn twin) {
  return v == Variant::shipped ? shipped : twin;
}

// fa2_rescale with the factor taken from the block max instead of the running max.
algo::Fa2Rescale<expr> fa2_rescale_factor_of_block_max(expr running_max, expr block_max) {
  const expr m = D::max(running_max, block_max);
  const expr offset = algo::exponent_offset(m);
  return {m, offset, algo::shifted_exp2(block_max, offset)};
}

// fa2_rescale with exponent_offset's -inf guard removed (offset = m).
algo::Fa2Rescale<expr> fa2_rescale_unguarded(expr running_max, expr block_max) {
  const expr m = D::max(running_max, block_max);
  const expr offset = m;
  return {m, offset, algo::shifted_exp2(running_max, offset)};
}

// fa1_combine without the l = 0 test.
algo::Fa1Combine<expr> fa1_combine_unguarded(expr running_max, expr running_sum, expr block_max,
                                             expr block_sum) {
  const expr m = D::max(running_max, block_max);
  const expr offset = algo::exponent_offset(m);
  const expr old_part = D::mul(algo::shifted_exp2(running_max, offset), running_sum);
  const expr block_factor = algo::shifted_exp2(block_max, offset);
  const expr l = old_part + D::mul(block_factor, block_sum);
  const expr inv = D::div(D::lit(1, l), l);
  return {m, l, D::mul(old_part, inv), D::mul(block_factor, inv)};
}

// finalize_row without the empty-row test.
algo::RowOutput<expr> finalize_row_unguarded(expr m, expr l, expr ln2) {
  const expr inv = D::div(D::lit(1, l), l);
  const expr lse = D::mul(m, ln2) + D::log(l);
  return {inv, lse};
}

// recompute_prob without the clamp of the argument at 0.
expr recompute_prob_unclamped(expr x, expr lse_in_log2) {
  const expr arg = x - lse_in_log2;
  return D::exp2(arg);
}

// ---- a. FA2 step

expr one_of(const expr& x, const std::vector<expr>& candidates) {
  expr r = x.ctx().bool_val(false);
  for (const auto& c : candidates) r = r || x == c;
  return r;
}

// An exponent factor or weight exp2(x - offset) for the new max: in [0,1], +0 for x = -inf, and 1
// for x the (finite) new max.
expr weight_ok(const expr& weight, const expr& x, const expr& new_max) {
  return in_unit(weight) && z3::implies(is_neg_inf(x), plus_zero(weight)) &&
         z3::implies(is_finite(x) && x == new_max, is_one(weight));
}

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

std::string statement(const std::string& what) { return what + kAssumed; }

bool same_query(const Obligation& a, const Obligation& b) {
  if (!z3::eq(a.goal, b.goal) || a.assumptions.size() != b.assumptions.size()) return false;
  for (std::size_t i = 0; i < a.assumptions.size(); ++i) {
    if (!z3::eq(a.assumptions[i], b.assumptions[i])) return false;
  }
  return true;
}

using Builder = std::vector<Obligation> (*)(z3::context&, Variant, Mode);

// The shipped variant is proved; the twin refuted on the obligations its change touches (the others
// are the shipped functions' queries verbatim).
template <Builder build>
std::vector<Obligation> build_variant(z3::context& c, Variant variant) {
  if (variant == Variant::shipped) return build(c, Variant::shipped, {Mode::Kind::proof});
  std::vector<expr> shipped_goals;
  const std::vector<Obligation> shipped = build(c, Variant::shipped, {Mode::Kind::reference, &shipped_goals});
  std::vector<Obligation> obligations = build(c, Variant::twin, {Mode::Kind::refutation, &shipped_goals});
  std::erase_if(obligations, [&](const Obligation& ob) {
    return std::any_of(shipped.begin(), shipped.end(), [&](const Obligation& s) { return same_query(ob, s); });
  });
  return obligations;
}

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
