#include "core/verdict.h"

#include <cmath>

#include <array>

namespace flashproof {
namespace {

constexpr std::array kStatuses = {CaseStatus::pass,       CaseStatus::fail,
                                  CaseStatus::out_of_domain, CaseStatus::not_judged,
                                  CaseStatus::crash,      CaseStatus::pass_baseline_rule,
                                  CaseStatus::fail_baseline_rule};

}  // namespace

const char* case_status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::pass: return "pass";
    case CaseStatus::fail: return "fail";
    case CaseStatus::out_of_domain: return "out-of-domain";
    case CaseStatus::not_judged: return "not-judged";
    case CaseStatus::crash: return "crash";
    case CaseStatus::pass_baseline_rule: return "pass (baseline rule)";
    case CaseStatus::fail_baseline_rule: return "fail (baseline rule)";
  }
  return "?";
}

std::optional<CaseStatus> parse_case_status(std::string_view name) {
  for (CaseStatus s : kStatuses)
    if (name == case_status_name(s)) return s;
  return std::nullopt;
}

CaseStatus case_status(Verdict v) {
  switch (v) {
    case Verdict::pass: return CaseStatus::pass;
    case Verdict::fail: return CaseStatus::fail;
    case Verdict::out_of_domain: return CaseStatus::out_of_domain;
    case Verdict::not_judged: return CaseStatus::not_judged;
    case Verdict::pass_baseline_rule: return CaseStatus::pass_baseline_rule;
    case Verdict::fail_baseline_rule: return CaseStatus::fail_baseline_rule;
  }
  return CaseStatus::fail;
}

const char* verdict_name(Verdict v) { return case_status_name(case_status(v)); }

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::out_of_domain, Verdict::not_judged,
                    Verdict::pass_baseline_rule, Verdict::fail_baseline_rule})
    if (name == verdict_name(v)) return v;
  return std::nullopt;
}

int verdict_rank(Verdict v) {
  switch (v) {
    case Verdict::pass: return 0;
    case Verdict::pass_baseline_rule: return 1;
    case Verdict::not_judged: return 2;
    case Verdict::out_of_domain: return 3;
    case Verdict::fail_baseline_rule: return 4;
    case Verdict::fail: return 5;
  }
  return 5;
}

const char* logit_class(double max_logit) {
  const double m = std::fabs(max_logit);
  if (m < 10) return kLogitClasses[0];
  if (m < 1e3) return kLogitClasses[1];
  return m < 1e6 ? kLogitClasses[2] : kLogitClasses[3];
}

}  // namespace flashproof
