#include "fuzz/failure_signature.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <string_view>

namespace flashproof::fuzz {
namespace {

constexpr std::array<std::string_view, 5> kTensorOrder = {"O", "LSE", "dQ", "dK", "dV"};

std::size_t tensor_rank(std::string_view name) {
  return static_cast<std::size_t>(std::find(kTensorOrder.begin(), kTensorOrder.end(), name) - kTensorOrder.begin());
}

// A count of the record (0 when absent: a record written before the member existed, as
// errors.loose_reference).
std::int64_t record_count(const json::Value& object, std::string_view key) {
  const json::Value* v = json::find(object, key);
  if (v == nullptr) return 0;
  const std::optional<double> n = json::record_number(*v);
  return n && *n > 0 ? static_cast<std::int64_t>(*n) : 0;
}

const json::Value& record_member(const json::Value& object, std::string_view key) {
  static const json::Value none;
  const json::Value* v = json::find(object, key);
  return v == nullptr ? none : *v;
}

// One failing tensor's rules, in check_tensor's order (harness/verdict.cpp). Outside the valid
// input domain only the envelope fails a tensor; the other counts are then reported, not failed.
std::vector<FailureRule> rules_of(const json::Value& t, bool inputs_in_domain) {
  std::vector<FailureRule> rules;
  const json::Value& errors = record_member(t, "errors");
  const json::Value& rigorous = record_member(t, "rigorous_bound");
  if (record_count(t, "outside_envelope") > 0) rules.push_back(FailureRule::outside_envelope);
  if (inputs_in_domain) {
    if (record_count(t, "finite_beyond_range") > 0) rules.push_back(FailureRule::finite_beyond_range);
    if (record_count(errors, "nonfinite_reference") > 0) rules.push_back(FailureRule::nonfinite_reference);
    if (record_count(errors, "nan_mismatch") > 0) rules.push_back(FailureRule::nan);
    if (record_count(errors, "inf_mismatch") > 0) rules.push_back(FailureRule::inf);
    if (record_count(rigorous, "above") > 0) rules.push_back(FailureRule::above_rigorous_bound);
    if (record_count(errors, "loose_reference") > 0) rules.push_back(FailureRule::loose_reference);
    if (record_count(errors, "count") == 0 && record_count(t, "beyond_range") == 0 && record_count(rigorous, "inf_within_bound") == 0)
      rules.push_back(FailureRule::nothing_compared);
  }
  if (rules.empty()) rules.push_back(FailureRule::other);
  return rules;
}

// "x: y (0x1f at 12)" -> "x: y (x at )": what stays of an exception's message across shapes, blocks
// and addresses.
std::string without_digits(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '0' && i + 2 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X') && std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      i += 2;
      while (i + 1 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) out += s[i];
  }
  return out;
}

// The leading number of s ("11 (Segmentation fault): ..." -> "11").
std::string leading_number(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  return std::string(s.substr(0, n));
}

// A crash's kind from the one line fuzz/child_process.cpp (ChildProcess::finish) and
// fuzz/case_runner.cpp (outcome_of) write for it.
CrashFailure crash_of(std::string_view why) {
  const auto starts = [&](std::string_view prefix) { return why.substr(0, prefix.size()) == prefix; };
  constexpr std::string_view kSignal = "killed by signal ", kExit = "exited with status ", kThrew = "threw";
  if (starts("timed out")) return {CrashKind::timeout, ""};
  if (starts(kSignal)) return {CrashKind::signal, leading_number(why.substr(kSignal.size()))};
  if (starts(kExit)) return {CrashKind::exit_status, leading_number(why.substr(kExit.size()))};
  if (starts(kThrew)) {
    std::string_view said = why.substr(kThrew.size());
    if (said.substr(0, 2) == ": ") said.remove_prefix(2);
    return {CrashKind::exception, without_digits(said)};
  }
  return {CrashKind::no_answer, ""};
}

}  // namespace

const char* failure_rule_name(FailureRule r) {
  switch (r) {
    case FailureRule::outside_envelope: return "outside-envelope";
    case FailureRule::finite_beyond_range: return "finite-beyond-range";
    case FailureRule::nonfinite_reference: return "nonfinite-reference";
    case FailureRule::nan: return "nan";
    case FailureRule::inf: return "inf";
    case FailureRule::above_rigorous_bound: return "above-rigorous-bound";
    case FailureRule::loose_reference: return "loose-reference";
    case FailureRule::nothing_compared: return "nothing-compared";
    case FailureRule::other: return "other";
  }
  return "other";
}

const char* crash_kind_name(CrashKind k) {
  switch (k) {
    case CrashKind::signal: return "signal";
    case CrashKind::timeout: return "timeout";
    case CrashKind::exception: return "exception";
    case CrashKind::exit_status: return "exit-status";
    case CrashKind::no_answer: return "no-answer";
  }
  return "no-answer";
}

bool FailureSignature::includes(const TensorFailure& f) const {
  return std::find(failures.begin(), failures.end(), f) != failures.end();
}

FailureSignature failure_signature(const CaseOutcome& o) {
  FailureSignature s;
  s.status = o.status;
  if (o.status == CaseStatus::crash) {
    s.crash = crash_of(o.why);
    return s;
  }
  if (o.status != CaseStatus::fail) return s;
  const json::Value* in_domain = json::find(o.record, "inputs_in_domain");
  const bool inputs_in_domain = in_domain == nullptr || !in_domain->is_boolean() || in_domain->get<bool>();
  const json::Value* tensors = json::find(o.record, "tensors");
  if (tensors == nullptr || !tensors->is_array()) return s;
  std::vector<const json::Value*> failing;
  for (const json::Value& t : *tensors)
    if (json::string(record_member(t, "verdict")).value_or("") == "fail") failing.push_back(&t);
  // The fixed order (the record's own, as harness/check.cpp appends them), whatever a record says.
  std::stable_sort(failing.begin(), failing.end(), [](const json::Value* a, const json::Value* b) {
    return tensor_rank(json::string(record_member(*a, "name")).value_or("")) < tensor_rank(json::string(record_member(*b, "name")).value_or(""));
  });
  for (const json::Value* t : failing) {
    const std::string name = json::string(record_member(*t, "name")).value_or("");
    for (FailureRule r : rules_of(*t, inputs_in_domain)) s.failures.push_back({name, r});
  }
  return s;
}

FailureTarget failure_target(const CaseOutcome& o) {
  const FailureSignature s = failure_signature(o);
  FailureTarget t;
  t.status = s.status;
  if (!s.failures.empty()) t.tensor = s.failures.front();
  t.crash = s.crash;
  return t;
}

std::string describe(const FailureTarget& t) {
  if (t.crash) {
    std::string s = std::string("crash: ") + crash_kind_name(t.crash->kind);
    if (t.crash->kind == CrashKind::exception) return s + " (" + t.crash->detail + ")";
    return t.crash->detail.empty() ? s : s + " " + t.crash->detail;
  }
  if (t.tensor) return t.tensor->tensor + ": " + failure_rule_name(t.tensor->rule);
  return case_status_name(t.status);
}

bool keeps_failure(const FailureTarget& target, const CaseOutcome& candidate) {
  if (candidate.refused) return false;  // refused when it ran: unsupported, not this failure
  if (candidate.status != target.status) return false;
  if (target.crash) return crash_of(candidate.why) == *target.crash;
  if (target.tensor) return failure_signature(candidate).includes(*target.tensor);
  return true;
}

}  // namespace flashproof::fuzz
