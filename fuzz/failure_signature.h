// What a failed or crashed campaign case failed of, so that shrinking (shrink.h) keeps that
// failure and not merely the status: before, a candidate was adopted whenever its status equalled
// the original's, and saved cases showed another defect than the one found (a partial-block NaN
// in O shrunk to an extreme-logit case above the bound, a dQ NaN to a subnormal dK error, a forward
// NaN to a backward inf).
//
// A `fail`'s signature is the list of (tensor, rule) pairs its check record fails, read from the
// record's per-tensor counts (harness/records.h, the rules of harness/verdict.cpp's check_tensor).
// Its *target* is the first pair: the first failing tensor in the fixed order O, LSE, dQ, dK, dV
// and, within it, the first rule in the order check_tensor reports them. That is the reason the
// campaign's record and note give ("why": the first reason of the first failing tensor), so a
// shrunk case's note names the same tensor and rule as the original's. A `crash`'s target is its
// kind, read from the child's one-line end (fuzz/child_process.cpp): the signal (with its number),
// the time limit, the exception (with the shape of its message: digits dropped, so a divergent
// barrier in another block is the same exception and a harness refusal, "... does not support
// this case", is not), another exit status (with its value), or no complete answer.
//
// shrink_case adopts a candidate only when its signature includes the original's target
// (keeps_failure): the same tensor failed by the same rule, or a crash of the same kind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/verdict.h"
#include "fuzz/case_runner.h"

namespace flashproof::fuzz {

// How a tensor fails, one per reason check_tensor can give, in its order (record fields in
// parentheses; an "unwritten" element is the NaN rule: outputs are poisoned with NaN before a run).
enum class FailureRule {
  outside_envelope,         // finite values outside the bound-free envelope (outside_envelope)
  finite_beyond_range,      // finite values where the exact result overflows (finite_beyond_range)
  nonfinite_reference,      // reference values not finite (errors.nonfinite_reference)
  nan,                      // NaN where the exact value is not (errors.nan_mismatch)
  inf,                      // inf where the exact value is finite, or the reverse (errors.inf_mismatch)
  above_rigorous_bound,     // finite values above the rigorous bound (rigorous_bound.above)
  loose_reference,          // reference bound not far below the tolerance (errors.loose_reference)
  nothing_compared,         // no element compared (errors.count 0, nothing beyond the range)
  other,                    // verdict fail, but none of the above counted (a rule added later)
};
const char* failure_rule_name(FailureRule r);  // "outside-envelope", "nan", ...

struct TensorFailure {
  std::string tensor;  // "O", "LSE", "dQ", "dK", "dV"
  FailureRule rule = FailureRule::other;
  bool operator==(const TensorFailure&) const = default;
};

enum class CrashKind { signal, timeout, exception, exit_status, no_answer };
const char* crash_kind_name(CrashKind k);  // "signal", "timeout", ...

struct CrashFailure {
  CrashKind kind = CrashKind::no_answer;
  // signal: its number; exit_status: the status; exception: the message without its digits;
  // empty otherwise.
  std::string detail;
  bool operator==(const CrashFailure&) const = default;
};

struct FailureSignature {
  CaseStatus status = CaseStatus::pass;
  // fail: every (tensor, rule) the record fails, tensors in the order O, LSE, dQ, dK, dV, each
  // tensor's rules in FailureRule's order. Empty for other statuses (and for a record that cannot
  // be read).
  std::vector<TensorFailure> failures;
  std::optional<CrashFailure> crash;  // crash: its kind
  bool includes(const TensorFailure& f) const;
};

FailureSignature failure_signature(const CaseOutcome& o);

// The failure that shrinking keeps: a fail's first TensorFailure, a crash's kind; nothing for
// pass, out-of-domain, not-judged, or a fail whose record names no failing tensor.
struct FailureTarget {
  CaseStatus status = CaseStatus::pass;
  std::optional<TensorFailure> tensor;
  std::optional<CrashFailure> crash;
};
FailureTarget failure_target(const CaseOutcome& o);
// "dQ: nan", "crash: signal 11", "crash: exception (emulator: barrier divergence in block (,,))".
std::string describe(const FailureTarget& t);

// Whether `candidate` fails as `original` did: the same status and, for a fail, the target's
// tensor failed by the target's rule (other rules and tensors may fail too), for a crash the same
// kind. A fail whose record names no failing tensor (never written by this harness) keeps only its
// status, as before.
bool keeps_failure(const FailureTarget& target, const CaseOutcome& candidate);

}  // namespace flashproof::fuzz
