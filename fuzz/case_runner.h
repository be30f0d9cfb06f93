// One (case, implementation) of a campaign, checked in an isolated child process
// (child_process.h) by the harness's check (harness/check.h: the same verdicts, bounds and
// tolerances as `flashproof check` and the properties).
#pragma once

#include <string>

#include "harness/check.h"

namespace flashproof::fuzz {

struct CaseOutcome {
  std::string status;        // pass, fail, out-of-domain, crash
  std::string why;           // fail: the first reason; crash: what ended the process
  std::string record_json;   // the check's JSON record on one line; empty for a crash
  double logit_scale = 0;    // largest |scale * q.k| over visible pairs (the reference's logits)
  double seconds_total = 0, seconds_impl = 0, seconds_reference = 0, seconds_bounds = 0;
};

struct ChildEnd;

// c.impl names the implementation. scratch: a path prefix for the child's files.
CaseOutcome run_case_isolated(const Case& c, const CheckOptions& options, const std::string& scratch,
                              double timeout_seconds);

// The two halves of run_case_isolated, for callers that run several children at once: the work
// a child does (the check, its result as text) and the outcome read from the child's end.
// `shared`: empty, or a file through which the implementations of one case share its prepared
// context (harness/case_context_file.h): loaded when it holds this case, else prepared (with the
// naive baseline) and saved there.
std::string check_in_child(const Case& c, const CheckOptions& options, const std::string& shared = {});
CaseOutcome outcome_of(const ChildEnd& end);

// Largest |softmax_scale * q_i . k_j| over the visible (i, j) of every head, in double; 0 when
// nothing is visible, inf when an input is not finite.
double max_scaled_logit(const Problem& p, const Inputs& in);

// A JSON text on one line: the line breaks and the indentation after them removed (the writers
// escape line breaks inside strings, so only layout goes).
std::string one_line(const std::string& json);

}  // namespace flashproof::fuzz
