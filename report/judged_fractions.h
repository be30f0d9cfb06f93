// How much of a campaign the certified tier judged (docs/reports.md "Judged"): records by their
// case's logit class (core/verdict.h logit_class, from the record's logit_scale) and tensors by
// name, each with how many were judged (pass or fail), not judged, out of the domain and, for
// records, crashed. On the first screen of the fuzz command's summary, summary.md, index.html and
// in results.json: a campaign whose cases are mostly not judged must not read as a clean pass.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/fuzz_record.h"

namespace flashproof::report {

struct JudgedCount {
  std::string label;  // a logit class, or a tensor's name
  // judged: by the rigorous bounds (pass or fail); baseline_rule: by the second tier alone (pass or
  // fail (baseline rule)); not_judged: by neither.
  std::size_t total = 0, judged = 0, baseline_rule = 0, not_judged = 0, out_of_domain = 0, crash = 0;
};

struct JudgedFractions {
  JudgedCount all;                     // every record
  std::vector<JudgedCount> by_class;   // kLogitClasses' order, then "unknown" (no logit_scale); only those present
  std::vector<JudgedCount> by_tensor;  // O, LSE, dQ, dK, dV, then others by name; only those present
};

JudgedFractions judged_fractions(const std::vector<FuzzRecord>& records);

// "judged (pass or fail) 412 of 500 records (82%), by the baseline rule 60; by the largest |scale
// q.k|: <10 300/300, ...; per tensor: O 480/500, ..." for the fuzz command's last lines.
std::string judged_summary(const JudgedFractions& f);

}  // namespace flashproof::report
