// One (case, implementation) of a campaign, checked in an isolated child process
// (child_process.h) by the harness's check (harness/check.h: the same verdicts, bounds and
// tolerances as `flashproof check` and the properties).
#pragma once

#include <string>

#include "core/json.h"
#include "harness/check.h"

namespace flashproof::fuzz {

struct CaseOutcome {
  CaseStatus status = CaseStatus::crash;  // the check's verdict, or crash
  // The implementation refused the case when it ran (core/attention_impl.h RefusedAtRunTime):
  // unsupported, no record; `why` says why, status is meaningless.
  bool refused = false;
  std::string why;           // fail: the first reason; crash: what ended the process
  json::Value record;        // the check's record (harness/check.h's to_json); null for a crash
  std::string where;         // the record's case.where (host, gpu, emulated); empty for a crash
  double logit_scale = 0;    // largest |scale * q.k| over visible pairs (the reference's logits)
  double seconds_total = 0, seconds_impl = 0, seconds_reference = 0, seconds_bounds = 0;
};

struct ChildEnd;

// c.impl names the implementation. scratch: a path prefix for the child's files.
CaseOutcome run_case_isolated(const Case& c, const CheckOptions& options, const std::string& scratch,
                              double timeout_seconds);

// The two halves of run_case_isolated, for callers that run several children at once: the work
// a child does (the check) and the outcome read from the child's end. The child answers with one
// JSON object, {"status", "why", "logit_scale", "seconds": {"impl", "reference", "bounds"},
// "record"} (or {"status": "unsupported", "why"} for a refusal at run time), which outcome_of
// parses once; an answer it cannot read makes the outcome a crash.
// `shared`: empty, or a file through which the implementations of one case share its prepared
// context (harness/case_context_file.h): loaded when it holds this case, else prepared (with the
// naive baseline) and saved there.
std::string check_in_child(const Case& c, const CheckOptions& options, const std::string& shared = {});
CaseOutcome outcome_of(const ChildEnd& end);

// Largest |softmax_scale * q_i . k_j| over the visible (i, j) of every head, in double; 0 when
// nothing is visible, inf when an input is not finite.
double max_scaled_logit(const Problem& p, const Inputs& in);

// The logit scale of a case whose child crashed before measuring it: measured in the parent, over
// every pair; NaN (written "nan") in a sampled campaign's case beyond kProductionMaxLogitScanWork
// (an unsampled campaign's cases are small).
double crashed_case_logit_scale(const Case& c, const CheckOptions& options);

}  // namespace flashproof::fuzz
