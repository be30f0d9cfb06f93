#include "harness/check_render.h"
#include "harness/records.h"

#include <cstdint>
#include <iomanip>
#include <sstream>
#include <vector>

namespace flashproof {
namespace {

std::string short_number(double x) {
  std::ostringstream s;
  s << std::setprecision(3) << x;
  return s.str();
}

}  // namespace

json::Value check_record_json(const CheckRecord& r) { return json::Value(r); }

json::Layout check_record_layout() {
  // A tensor's line continues under its opening brace; a sample's lists one level deeper.
  json::Layout tensor, reference, tensors;
  tensor.new_line = {{"rigorous_bound", 5}, {"errors", 5}, {"baseline_errors", 5}};
  reference.new_line = {{"sampled_rows", 4}, {"sampled_columns", 4}};
  tensors.indented = true;
  tensors.inner = {{"*", tensor}};
  json::Layout record = json::indented();
  record.same_line = {"inputs_in_domain", "domain_note"};
  record.inner = {{"reference", reference}, {"tensors", tensors}, {"*", json::one_line()}};
  return record;
}

std::string to_json(const CheckRecord& r) { return json::write(check_record_json(r), check_record_layout()) + "\n"; }

std::string to_table(const CheckRecord& r) {
  std::ostringstream s;
  s << "case: " << r.c.impl << " (" << r.impl_where << ") " << r.c.problem.describe()
    << " dist=" << distribution_name(r.c.dist) << " seed=" << r.c.seed;
  if (r.c.schedule != 0) s << " schedule=" << r.c.schedule;
  s << (r.c.backward ? " forward+backward" : " forward") << "\n";
  s << "reference: " << r.reference_backend << ", sampling " << r.reference_stats.sampling
    << ", MPFR fallbacks " << r.reference_stats.fallback_rows << " rows / "
    << r.reference_stats.fallback_columns << " columns\n";
  if (!r.in_domain) s << "out of the valid domain: " << r.domain_note << "\n";
  s << std::left << std::setw(5) << "" << std::setw(13) << "max_abs" << std::setw(13)
    << "max_rel" << std::setw(10) << "max_ulps" << std::setw(13) << "baseline" << std::setw(13)
    << "tolerance" << std::setw(11) << "bound" << std::setw(10) << "err/bound" << std::setw(11)
    << "ref_bound" << std::setw(9) << "nan/inf" << "verdict\n";
  s << std::setprecision(3);
  for (const TensorCheck& t : r.tensors) {
    s << std::setw(5) << t.name << std::setw(13) << t.errors.max_abs << std::setw(13)
      << t.errors.max_rel << std::setw(10)
      << (t.errors.ulps_unknown > 0 && t.errors.max_ulps == 0 ? std::string("n/a") : short_number(t.errors.max_ulps))
      << std::setw(13)
      << (t.baseline_not_finite > 0 ? std::string("not finite") : short_number(t.baseline_errors.max_abs)) << std::setw(13)
      << (t.regression_applies ? short_number(t.tolerance) : std::string("(n/a)"))
      << std::setw(11) << (t.unbounded > 0 && t.max_rigorous_bound == 0 ? std::string("none") : short_number(t.max_rigorous_bound))
      << std::setw(10) << (t.unbounded > 0 && t.max_rigorous_bound == 0 ? std::string("-") : short_number(t.bound_ratio))
      << std::setw(11)
      << t.max_reference_bound << std::setw(9)
      << (std::to_string(t.errors.nan_mismatch) + "/" + std::to_string(t.errors.inf_mismatch))
      << verdict_name(t.verdict) << "\n";
    for (const std::string& why : t.reasons) s << "       " << why << "\n";
    // The element of err/bound, unless a reason (rule 2's) names it already.
    if (const ElementReport& w = t.worst_element; w.index >= 0 && t.above_rigorous_bound == 0)
      s << "       largest err/bound at " << describe_element(t.name, w) << ", bound " << short_number(w.bound)
        << ", reference bound " << short_number(w.reference_bound) << " (" << short_number(w.ratio)
        << "x the bound)\n";
    if (t.unbounded > 0)
      s << "       not judged: " << t.unbounded << " elements have no rigorous bound; only their bound-free envelope "
        << "was checked (" << t.outside_envelope << " outside it)\n";
    if (t.vacuous > 0)
      s << "       not judged: " << t.vacuous << " elements have a bound at least the size of the exact " << t.name
        << " (" << short_number(t.max_rigorous_bound) << "), which admits 0 and twice the answer; "
        << "their bound-free envelope was checked\n";
    if (t.baseline_rule.applied && !(t.verdict == Verdict::not_judged && t.baseline_rule.vacuous))
      s << "       second tier (baseline rule): error " << short_number(t.errors.max_abs) << " against "
        << short_number(t.baseline_rule.tolerance) << " (k x the dtype computation's error "
        << short_number(t.baseline_rule.dtype_baseline_max_abs)
        << (t.baseline_rule.lse_share > 0 ? " + the given LSE's share " + short_number(t.baseline_rule.lse_share) : std::string())
        << " + floor): " << verdict_name(t.verdict) << "\n";
    else if (t.verdict == Verdict::not_judged && t.baseline_rule.vacuous)
      s << "       second tier: nothing judged, its tolerance " << short_number(t.baseline_rule.tolerance)
        << " (k x the dtype computation's error " << short_number(t.baseline_rule.dtype_baseline_max_abs)
        << (t.baseline_rule.lse_share > 0 ? " + the given LSE's share " + short_number(t.baseline_rule.lse_share)
                                          : std::string())
        << ") reaches the size of the exact " << t.name << " and would judge nothing\n";
    else if (t.verdict == Verdict::not_judged && t.baseline_rule.dtype_baseline_not_finite > 0)
      s << "       second tier not applied: the dtype computation returned " << t.baseline_rule.dtype_baseline_not_finite
        << " NaN or inf values where the exact one is finite\n";
    if (t.errors.ulps_unknown > 0)
      s << "       max_ulps leaves out " << t.errors.ulps_unknown << " elements where the reference's bound spans "
        << "more than one " << dtype_name(t.dtype) << " step (the exact value's rounding is not settled there)\n";
    if (t.conditional > 0)
      s << "       " << t.conditional << " elements judged by a bound that holds where no intermediate overflowed "
        << "(a finite result certifies it)\n";
    if (t.baseline_not_finite > 0)
      s << "       rule 3 n/a: the naive baseline is NaN or inf at " << t.baseline_not_finite
        << " elements where the exact value is finite (no error to compare with)\n";
    if (t.regression)
      s << "       accuracy regression (rule 3, reported, not failing here): error above the tolerance, k x "
        << "the naive baseline's error" << (t.d_error_share > 0 ? " (+ the given O's share of D, " + short_number(t.d_error_share) + ")" : "")
        << " + floor\n";
    if (t.inf_within_bound > 0)
      s << "       " << t.inf_within_bound << " infinities where the exact value is finite but the "
        << "rigorous bound reaches beyond the " << dtype_name(t.dtype) << " range (admitted"
        << (t.inf_within_vacuous_bound > 0
                ? "; " + std::to_string(t.inf_within_vacuous_bound) + " under a vacuous bound: not judged"
                : std::string())
        << ")\n";
    if (t.beyond_range > 0)
      s << "       exact value beyond the " << dtype_name(t.dtype)
        << " range at " << t.beyond_range << " elements: " << t.overflow_as_inf
        << " returned as the signed inf, "
        << (t.opposite_inf_within_bound > 0
                ? std::to_string(t.opposite_inf_within_bound) +
                      " as the other sign's inf within the rigorous bound (admitted), "
                : std::string())
        << t.finite_within_bound << " finite within the rigorous bound (admitted), "
        << t.finite_beyond_range << " finite beyond it\n";
  }
  s << "rules applied: no NaN/inf where the reference is finite; every element within its "
       "rigorous bound (docs/error-bounds.md Part 2; 'bound' is the largest, 'err/bound' the "
       "largest ratio); reported, not failing (the property suite fails on it): error <= k x "
       "(naive baseline + for dQ, dK of a flash backward the given O's share of D) + floor (k = 2 "
       "forward, 3 backward; n/a: O and the gradients where "
       "|LSE| is beyond the rule's range, and a tensor where the baseline is not finite); reference finite and its bound far below the tolerance; where the exact value overflows the dtype, the signed inf is accepted, a "
       "finite value or the other inf fails unless it is within the rigorous bound, and the tensor is "
       "out-of-domain; every finite value must lie in its bound-free envelope (O in the hull of the "
       "visible V rows, LSE between the largest logit and it plus log n, |dV|, |dQ|, |dK| below what "
       "P <= 1 allows); where no rigorous bound exists (outside the domain: everywhere) or the bound is "
       "at least the size of the exact tensor, the element is not judged beyond its envelope.\n";
  s << "verdict: " << verdict_name(r.verdict) << (r.regression ? " (accuracy regression reported)" : "") << "\n";
  return s.str();
}

}  // namespace flashproof
