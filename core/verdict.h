// The verdict of a check and the status of a campaign's case, with the names records carry, in
// one place: the harness gives verdicts (harness/verdict.h), campaigns write and count statuses
// (fuzz/), the report reads them back (report/fuzz_record.h). The parsers return nothing for a
// name that is none of these: a case status read back is then refused (a child's answer counts as
// a crash, a resumed campaign's line is cut off and its pair runs again, a report line is an
// error), a tensor's verdict counts in no column.
#pragma once

#include <optional>
#include <string_view>

namespace flashproof {

// not_judged: nothing failed, but some compared element had no finite rigorous bound, so its
// accuracy was not judged (only its bound-free envelope was checked); never reported as pass.
// The second tier (docs/spec.md "Verdicts"), never mixed with the first: a tensor the rigorous
// bounds leave not judged is judged by FlashAttention's own rule, its error against k times that of
// the same computation in the dtype: pass_baseline_rule or fail_baseline_rule ("pass (baseline
// rule)", "fail (baseline rule)"). A record's verdict is its tensors' worst: fail, then
// fail_baseline_rule, out_of_domain, not_judged, pass_baseline_rule, pass.
enum class Verdict { pass, fail, out_of_domain, not_judged, pass_baseline_rule, fail_baseline_rule };

// "pass", "fail", "out-of-domain", "not-judged", "pass (baseline rule)", "fail (baseline rule)"
const char* verdict_name(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view name);

// A campaign case: the check's verdict, or crash (the implementation or the check itself died).
enum class CaseStatus { pass, fail, out_of_domain, not_judged, crash, pass_baseline_rule, fail_baseline_rule };

// How bad a verdict is (the order above): a record's verdict is its tensors' worst.
int verdict_rank(Verdict v);
// Whether a verdict or status is a failure of either tier (fail, fail (baseline rule)).
inline bool is_failure(Verdict v) { return v == Verdict::fail || v == Verdict::fail_baseline_rule; }
inline bool is_failure(CaseStatus s) { return s == CaseStatus::fail || s == CaseStatus::fail_baseline_rule; }

CaseStatus case_status(Verdict v);
const char* case_status_name(CaseStatus s);  // the verdict's name, or "crash"
std::optional<CaseStatus> parse_case_status(std::string_view name);

// The classes of a case's largest visible |scale q.k| in which campaign summaries, reports and
// bench/bound_tightness count judged verdicts (docs/error-bounds.md "Not judged"). NaN (a NaN
// logit) falls in the last.
inline constexpr const char* kLogitClasses[] = {"<10", "10-1e3", "1e3-1e6", ">=1e6"};
const char* logit_class(double max_logit);

}  // namespace flashproof
