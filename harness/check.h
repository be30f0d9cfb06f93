// The one pipeline of docs/spec.md ("Purpose"), used by the CLI, the properties, fuzz campaigns and
// the Python package: case -> inputs in the dtype -> implementation under test -> outputs -> reference ->
// errors and tolerances -> verdict -> record (JSON or a table).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bounds/implementation_bounds.h"
#include "core/attention_impl.h"
#include "core/generators.h"
#include "core/metrics.h"
#include "core/problem.h"
#include "core/verdict.h"
#include "reference/reference.h"

namespace flashproof {

struct Case {
  Problem problem;
  Distribution dist;
  std::uint64_t seed = 0;
  std::string impl = "naive";
  bool backward = false;
  // The emulator's schedule for the implementation under test (kernels/emu/emulator.h): 0, the
  // default, or the seed of an explored schedule. Only emulated kernels are affected.
  std::uint64_t schedule = 0;
};

struct CheckOptions {
  reference::Options reference;
  // Accuracy regression rule: error <= k * (naive baseline's error) + floor (k = 2 forward,
  // 3 backward, as in FlashAttention's tests). The floor is `floor_ulps` units of the dtype's
  // rounding at the tensor's largest reference magnitude (the size of the summands, see
  // reference::CertifiedTensor), so a baseline error of exactly 0 (seqlen_k = 1) or an exactly
  // zero reference does not demand a bit-exact answer, plus the dtype's smallest subnormal, so that
  // it is not 0 where every magnitude is (softmax scale 0). dQ and dK of a backward that forms D from
  // the O it is given add that O's share to the baseline's error (TensorCheck::d_error_share).
  double k_forward = 2, k_backward = 3, floor_ulps = 1;
  // LSE's floor, in fp32 units: an LSE is a short chain of fp32 operations, and the fused kernels
  // compute it in log2 units (the flash arithmetic model, core/attention_impl.h: exp2 with log2(e) folded into the scale), so it carries four
  // roundings relative to its magnitude (scale * log2(e), the scaled logit, the product by ln 2,
  // the final sum with log(l)) where the naive baseline has two. With one key (seqlen_k = 1 or a
  // one-key window) the baseline's error can be exactly 0, and 1 unit would then demand more than
  // that formulation can give.
  double lse_floor_ulps = 4;
  // Where the regression rule judges O and the backward: only when every row's |LSE| is at most
  // regression_lse_fraction * u_dtype / 2^-24 (fp16: 1024, bf16: 8192). Every implementation
  // rounds the logits in fp32 (about 2^-24 |s|, several times; |s| ~ |LSE| for the keys that carry
  // the weight), which then stays below an eighth of the dtype's rounding. Beyond it P is set by
  // those roundings, not by the data: where the top logits differ by less than their rounding,
  // which key wins in O is a coin flip for the implementation and the baseline alike, and an
  // FA-style backward recomputes P from the stored fp32 LSE, by design less accurate than a baseline
  // that recomputes the softmax (docs/properties.md, Findings). There only the rigorous bound
  // (rule 2), which includes those terms, judges O and the gradients. LSE itself is smooth in the
  // logits (its floor covers their rounding) and is judged at every magnitude.
  double regression_lse_fraction = 0.125;
  // The relative slack of the bound-free envelopes (bounds/envelope.h) that judge what no rigorous
  // bound judges. Far above any floating-point evaluation's error (fp32 sums, P rounded to bf16:
  // a few 2^-8), far below a wrong answer's.
  double envelope_slack = 1.0 / 16;
  // Where every magnitude of a tensor is 0, a finite rigorous bound is vacuous (judges nothing:
  // TensorCheck::vacuous) from this fraction of the element's envelope width on (what any attention
  // of these inputs could return; docs/error-bounds.md "Not judged").
  double vacuous_envelope_fraction = 1.0 / 16;
  // A bound is vacuous from the tensor's largest |r| on, or from this fraction of its summands'
  // size (CertifiedTensor::magnitude) where that is more: where the summands cancel (dQ, dK of a
  // peaked softmax) a bound well below them still judges, one of their whole size admits what any
  // sum of them could give (docs/error-bounds.md "Not judged").
  double vacuous_magnitude_fraction = 1.0 / 16;
  // Every rigorous bound multiplied by this before rule 2: 1 in every product path. Other values
  // are the deliberately loosened and tightened bounds that the tightness band's twin tests must
  // see fail (bench/bound_tightness --bound-scale); not in case files, not on the command line.
  double bound_scale = 1;
  // The second tier (docs/spec.md "Verdicts"): tensors the rigorous bounds leave not judged are
  // judged by FlashAttention's rule against the computation in the dtype. Off: they stay not judged.
  bool baseline_rule = true;
};

// One element of an output tensor, located for a person: the element a failure names (the worst
// error over its rigorous bound, the first NaN or inf where the exact value is not), in the check
// record (docs/case-files.md, "The check record's elements"), the table and the failure's reason.
struct ElementReport {
  std::int64_t index = -1;          // linear index over the tensor's shape; -1: no such element
  std::vector<std::int64_t> coord;  // [b, s, h, d] (O, dQ, dK, dV) or [b, h, s] (LSE)
  double exact = 0;                 // the reference's value (the exact result within reference_bound)
  double returned = 0;              // the implementation's value
  double bound = 0;                 // the implementation's rigorous bound there (rule 2; x bound_scale)
  double reference_bound = 0;       // the reference's own bound there
  double ratio = 0;                 // |returned - exact| / bound (inf where bound is 0 and the error not)
};

// "dK[0, 3, 1, 5]: exact -1.07000001e-38, returned 0": the element of tensor `name` with its exact
// and returned values to 9 significant digits (every fp32 value reads back); the reasons and the
// table name elements so.
std::string describe_element(const std::string& name, const ElementReport& e);

// Results beyond the output dtype's range. Inside the valid input domain an exact result can
// still exceed what the dtype holds; docs/spec.md ("Valid domain") asks that every result meet its bound there, and never
// a finite wrong answer returned silently. With T the dtype's overflow threshold (the least magnitude that rounds to inf: fp16
// 65520, bf16 and fp32 just below 2^128) and a reference value r with certified bound B, the
// exact result lies in [|r| - B, |r| + B]. An element is *beyond the range* when its reference is
// finite and tight (B <= 2^-20 |r|) and |r| + B rounds to inf in the output dtype, i.e. the
// correctly rounded exact result is (or, at the very edge, may be) +-inf; it *certainly
// overflows* when |r| - B rounds to inf as well. At an element beyond the range:
//   - inf with the sign of r is the correctly rounded result: accepted (not an inf mismatch);
//   - a finite value where the exact result certainly overflows: fail ("finite values where the
//     exact dQ overflows fp16"), whatever the tolerance, unless rule 2 admits it (|value - r| - B
//     <= the implementation's rigorous bound): an arithmetic model whose bound reaches back into
//     the range allows a finite result there, as it allows an inf where the exact value is
//     finite (inf_within_bound). Admitted elements are counted (finite_within_bound);
//   - inf of the other sign: admitted when rule 2 reaches it (r -+ (bound + B) rounds to it),
//     counted (opposite_inf_within_bound);
//   - anything else (NaN, inf of the wrong sign outside the bound, a finite value at an edge
//     element) goes through the ordinary rules (NaN/inf mismatch, error against the tolerance).
// Elements accepted as inf, or finite at a certain overflow (admitted or failed), are left out of
// the error metrics (errors and baseline_errors, hence the tolerance), which cover the elements
// inside the range. A tensor with
// elements beyond the range and no failure is out_of_domain, not pass: its exact result is not
// representable, so it cannot be checked as a whole. A tensor that fails stays fail.
struct TensorCheck {
  std::string name;  // "O", "LSE", "dQ", "dK", "dV"
  DType dtype = DType::fp32;  // of the output (LSE: fp32; the others: the problem's dtype)
  ErrorMetrics errors;
  ErrorMetrics baseline_errors;  // of the naive baseline on the same inputs
  double tolerance = 0;          // regression rule: k * (baseline max_abs + d_error_share) + floor
  double floor = 0;              // that rounding-noise floor (CheckOptions::floor_ulps, lse_floor_ulps)
  // dQ, dK of a flash-model backward, which forms D = rowsum(dO * O) from the O it is given (the
  // implementation's own, in the dtype): the largest share of that O's error in the tensor,
  // |scale| |dO . (O^ - O)| sum_j P_j |k_j| (bounds::ImplementationBounds::dq_from_d_error). The
  // naive baseline forms D from P and dP and does not carry it; where dS cancels it alone can
  // exceed k times the baseline's error (docs/properties.md, Findings). The rule allows k times
  // it, as though the baseline had been given the same D. 0 for the other tensors and models.
  double d_error_share = 0;
  // false: the rule is not evaluated, where |LSE| is beyond its range (regression_lse_fraction) or
  // where the baseline is not finite (baseline_not_finite > 0).
  bool regression_applies = true;
  // Compared elements where the naive baseline is NaN or inf and the exact value is not (its dP
  // stored in the dtype overflows, say). Its error there is unbounded, so rule 3 has nothing to
  // measure against: the largest of its other errors would pose as its error and collapse the
  // tolerance towards the floor (docs/spec.md "Bug classes", tolerance collapse).
  std::int64_t baseline_not_finite = 0;
  // Rule 3 (docs/spec.md "Verdicts"), accuracy regression: error above `tolerance` where regression_applies. Reported
  // here (record, table, JSON), failing only in the property suite (accuracy-regression): it does
  // not change the verdict, which rules 1 and 2 and the domain decide.
  bool regression = false;
  // Rule 2: |actual - reference| - reference bound <= the rigorous bound of the implementation's
  // arithmetic model (bounds/implementation_bounds.h) at every compared finite element.
  std::int64_t above_rigorous_bound = 0;
  // Compared finite elements where the model gives no finite bound (every one outside the domain):
  // not judged by rule 2; any makes a tensor that does not fail not_judged. JSON:
  // rigorous_bound.unbounded.
  std::int64_t unbounded = 0;
  // Compared finite elements whose finite bound is vacuous: at least the tensor's exact size (the
  // larger of its largest |r| and CheckOptions::vacuous_magnitude_fraction of its summands' size,
  // CertifiedTensor::magnitude; exact_tensor_size), so that rule 2 admits 0 and twice the answer
  // (at large logits the model's P may be off by its own size); where every magnitude is 0, at least
  // CheckOptions::vacuous_envelope_fraction of the element's envelope width. Still held to
  // the bound; any makes a tensor that does not fail not_judged. JSON: rigorous_bound.vacuous;
  // not_judged is unbounded + vacuous.
  std::int64_t vacuous = 0;
  // Compared finite elements outside their bound-free envelope (bounds/envelope.h), which holds
  // every element beside rule 2: fail. The reason names the tensor's envelope rule.
  std::int64_t outside_envelope = 0;
  std::int64_t outside_envelope_index = -1;  // linear index of the first
  // Compared elements judged by a conditional bound (bounds::ImplementationBounds::dq_conditional:
  // valid where no intermediate overflowed, which a finite result certifies).
  std::int64_t conditional = 0;
  // Infinities where the exact value is finite but r +- (bound + reference bound) rounds to that
  // infinity: admitted by rule 2 and left out of the comparison (not inf mismatches). Those whose
  // bound is vacuous are counted in `vacuous` too, and here: the second tier fails them.
  std::int64_t inf_within_bound = 0;
  std::int64_t inf_within_vacuous_bound = 0;
  double max_rigorous_bound = 0;  // over compared elements with a finite bound
  double bound_ratio = 0;         // max |actual - reference| / rigorous bound: how tight the bound is
  std::int64_t bound_ratio_index = -1;  // linear index of that element
  // The element of bound_ratio, located (index -1 where no compared finite element had a finite
  // bound): what the reason "N elements above the rigorous bound" names. JSON:
  // rigorous_bound.worst_element.
  ElementReport worst_element;
  // The first element counted in errors.nan_mismatch (NaN returned where the exact value is not,
  // or the reverse) and in errors.inf_mismatch, named by those failures' reasons; index -1 where
  // there is none. bound and ratio are not set. JSON: first_nan, first_inf.
  ElementReport first_nan, first_inf;
  double max_reference_bound = 0;
  std::int64_t beyond_range = 0;         // compared elements whose exact value exceeds the dtype
  std::int64_t overflow_as_inf = 0;      // ... where the implementation returned the signed inf
  std::int64_t finite_beyond_range = 0;  // ... a finite value beyond the rigorous bound (certain overflow)
  std::int64_t finite_within_bound = 0;  // ... a finite value within it (certain overflow; admitted)
  std::int64_t opposite_inf_within_bound = 0;  // ... the other sign's inf, within it (admitted)
  Verdict verdict = Verdict::pass;
  std::vector<std::string> reasons;  // why it failed, one line each
  // The second tier (harness/baseline_rule.h), tried only on a tensor the rigorous bounds leave not
  // judged inside the domain: applied when the dtype computation's output is finite where the exact
  // value is; its max_abs error, and the tolerance k x (it + d_error_share + lse_share) + floor.
  // JSON: baseline_rule.
  struct BaselineRule {
    bool applied = false;
    double tolerance = 0, dtype_baseline_max_abs = 0;
    double lse_share = 0;  // a flash-model backward's allowance for the given LSE (given_lse_share)
    bool vacuous = false;  // the tolerance judges nothing: within it the tensor stays not judged
    std::int64_t dtype_baseline_not_finite = 0;
  };
  BaselineRule baseline_rule;
};

// Verdict of a case: fail when any tensor fails; else out_of_domain when its inputs are outside
// the valid domain (docs/error-bounds.md; no rigorous bound there: only the envelopes judge, and NaN, inf and large
// errors are allowed) or any tensor's exact result exceeds its dtype's range; else not_judged when
// any tensor is; else pass.
struct CheckRecord {
  Case c;
  std::string impl_where;
  // Inputs inside the valid domain (docs/spec.md) and every exact result representable in its output dtype.
  bool in_domain = true;
  bool inputs_in_domain = true;  // the input part alone
  // Why the case is out of the domain, e.g. "a scaled logit exceeds 2^64" or "exact dQ exceeds
  // the fp16 range at 198 elements" (several reasons are joined with "; ").
  std::string domain_note;
  std::vector<TensorCheck> tensors;
  reference::Stats reference_stats;
  std::string reference_backend;
  // A sampled check's judged query rows ([batch][heads_q][seqlen_q] flat indices) and key columns
  // ([batch][heads_kv][seqlen_k]); both empty when every output was judged. In the JSON record.
  std::vector<std::int64_t> sampled_rows, sampled_columns;
  Verdict verdict = Verdict::pass;
  bool regression = false;  // some tensor's rule 3 reported (TensorCheck::regression)
  double seconds_impl = 0, seconds_reference = 0, seconds_bounds = 0;
  // Not in the JSON: generating the inputs, the naive baseline's run for rule 3 (0 when the
  // implementation is the baseline itself; a prepared case's shared run otherwise), the tensors'
  // comparisons and verdicts.
  double seconds_inputs = 0, seconds_baseline = 0, seconds_checks = 0;
};

// Throws std::invalid_argument for an invalid case or an unknown / unsupporting implementation,
// with a one-line message. A check validates its problem once (into a ValidProblem, which its
// stages take) and asks the implementation once whether it supports the case.
CheckRecord run_check(const Case& c, const CheckOptions& opt = {});
// The same with an implementation that need not be registered (c.impl is then only a label).
CheckRecord run_check(const Case& c, AttentionImpl& impl, const CheckOptions& opt = {});

// An implementation's outputs on given inputs, as the check computes them: output tensors
// poisoned with a NaN pattern before the run (an element never written stays NaN), the backward
// (when asked) fed the implementation's own O and LSE. dq, dk, dv are empty without backward.
struct Outputs {
  HostTensor o, lse, dq, dk, dv;
  // A KV-cache problem with appended keys: empty when the cache the implementation left holds the
  // appended keys and values and nothing else changed (core/kv_cache.h cache_difference); else the
  // first difference, which fails the case.
  std::string cache_difference = {};
};
// With a sample (`wanted`), the implementation is told which outputs are judged and may skip the
// rest; the forward of a backward whose sample has key columns runs in full, since dK and dV of a
// key need the O and LSE of every row that sees it.
Outputs run_implementation(AttentionImpl& impl, const ValidProblem& p, bool backward, const Inputs& in,
                           const OutputSample* wanted = nullptr);

// What a check needs besides the implementation under test, the same for every implementation of
// a case: its inputs, whether they are inside the valid domain, the reference's results and, when
// asked for, the naive baseline's outputs. A campaign prepares it once per case and shares it
// among the implementations it checks (fuzz/, harness/case_context_file.h).
struct CaseContext {
  Inputs inputs;
  // The judged rows and columns of a sampled check (CheckOptions::reference.sample > 0;
  // harness/sample_plan.h); empty otherwise.
  std::optional<OutputSample> sample;
  std::string domain_note;  // why the inputs are outside the domain; empty inside it
  reference::Results reference;
  std::optional<Outputs> baseline;
  double seconds_reference = 0, seconds_inputs = 0, seconds_baseline = 0;
};
// The rigorous bounds (rule 2) of an implementation of arithmetic model `model` that reduces GQA
// gradients by `gqa` on the case's inputs (c.backward: with dQ, dK, dV), computed by the code
// run_check uses (bounds::bounds_and_envelopes; opt.bound_scale applied): +inf at every element when
// the inputs are outside the valid domain (domain_note, when given, receives why; empty inside), and
// outside a sampled check's sample (opt.reference.sample). They depend on the inputs alone, not on
// the implementation's outputs: a flash-model backward forms D from its own O, but its bound covers
// any O within O's bound; that O's actual error enters only rule 3's allowance (dq_from_d_error,
// dk_from_d_error), left 0 here. Throws std::invalid_argument for an invalid case.
// recomputed_logits: AttentionImpl::backward_recomputes_forward_logits of the implementation;
// key_splits: its max_key_splits(c.problem). A KV-cache case's bounds are its logical problem's.
bounds::ImplementationBounds rigorous_bounds(const Case& c, ArithmeticModel model,
                                             GqaGradientReduction gqa = GqaGradientReduction::group_sum,
                                             const CheckOptions& opt = {}, std::string* domain_note = nullptr,
                                             bool recomputed_logits = false, std::int64_t key_splits = 1);

// Throws std::invalid_argument for an invalid case.
CaseContext prepare_case(const Case& c, const CheckOptions& opt = {}, bool with_baseline = false);
// The check of `impl` on a prepared case (c.impl is only a label). Without a prepared baseline
// the naive baseline runs here (or is the implementation itself).
CheckRecord run_check(const Case& c, AttentionImpl& impl, const CaseContext& ctx,
                      const CheckOptions& opt = {});

}  // namespace flashproof
