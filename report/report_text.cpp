#include "report/report_text.h"

#include "report/display_text.h"
#include "report/distribution.h"

namespace flashproof::report {
namespace {

std::string counted(std::size_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace

std::size_t non_finite_failures(const Report& report) {
  std::size_t n = 0;
  for (const FuzzRecord& r : report.merged.records)
    n += r.status == CaseStatus::fail && r.non_finite_failure();
  return n;
}

const WorstCase* largest_finite_error_over_bound(const Report& report, const DtypeReport** dtype) {
  const WorstCase* largest = nullptr;
  for (const DtypeReport& d : report.dtypes)
    if (d.largest_finite &&
        (largest == nullptr || less_with_nan_greatest(largest->error_over_bound, d.largest_finite->error_over_bound))) {
      largest = &*d.largest_finite;
      if (dtype != nullptr) *dtype = &d;
    }
  return largest;
}

std::string one_line_summary(const Report& report) {
  const MergedCampaigns& m = report.merged;
  std::size_t pass = 0, fail = 0, out_of_domain = 0, not_judged = 0, crash = 0, pass2 = 0, fail2 = 0;
  for (const FuzzRecord& r : m.records) {
    pass2 += r.status == CaseStatus::pass_baseline_rule;
    fail2 += r.status == CaseStatus::fail_baseline_rule;
    pass += r.status == CaseStatus::pass;
    not_judged += r.status == CaseStatus::not_judged;
    fail += r.status == CaseStatus::fail;
    out_of_domain += r.status == CaseStatus::out_of_domain;
    crash += r.status == CaseStatus::crash;
  }
  std::string s = counted(m.records.size(), "record", "records") + " from " +
                  counted(m.inputs.size(), "input", "inputs");
  if (m.duplicates() > 0 || m.skipped_lines() > 0)
    s += " (" + counted(m.duplicates(), "duplicate", "duplicates") + " dropped, " +
         counted(m.skipped_lines(), "unparsable line", "unparsable lines") + " skipped)";
  s += ": " + std::to_string(pass) + " pass, " + std::to_string(fail) + " fail";
  // Whenever there are failures: a NaN or inf failure is in no error/bound below.
  if (fail > 0) s += " (" + std::to_string(non_finite_failures(report)) + " non-finite)";
  s += ", " + std::to_string(out_of_domain) + " out-of-domain, " + std::to_string(not_judged) + " not judged, " +
       std::to_string(crash) + " crash";
  if (pass2 + fail2 > 0)
    s += "; second tier: " + std::to_string(pass2) + " pass (baseline rule), " + std::to_string(fail2) +
         " fail (baseline rule)";
  // Pairs with no record, so that a campaign over a kernel that refuses much does not look whole.
  if (const std::uint64_t unsupported = m.ended_count("unsupported"); unsupported > 0)
    s += "; " + std::to_string(unsupported) + " unsupported (no record)";
  if (const std::uint64_t fitted = m.ended_count("fitted"); fitted > 0)
    s += "; " + std::to_string(fitted) + " fitted into a declared support";

  const DtypeReport* dtype = nullptr;
  if (const WorstCase* largest = largest_finite_error_over_bound(report, &dtype)) {
    const FuzzRecord& r = m.records[largest->record];
    s += "; largest finite error/bound " + number_text(largest->error_over_bound) + " (" +
         dtype->stats.dtype + " " + r.impl + " case " + std::to_string(r.index) + " " + largest->tensor + ")";
  }
  return s;
}

}  // namespace flashproof::report
