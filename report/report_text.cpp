#include "report/report_text.h"

#include "report/display_text.h"
#include "report/distribution.h"

namespace flashproof::report {
namespace {

std::string counted(std::size_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

}  // namespace

std::string one_line_summary(const Report& report) {
  const MergedCampaigns& m = report.merged;
  std::size_t pass = 0, fail = 0, out_of_domain = 0, not_judged = 0, crash = 0;
  for (const FuzzRecord& r : m.records) {
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
  s += ": " + std::to_string(pass) + " pass, " + std::to_string(fail) + " fail, " +
       std::to_string(out_of_domain) + " out-of-domain, " + std::to_string(not_judged) + " not judged, " +
       std::to_string(crash) + " crash";

  const ListedWorstCase* worst = nullptr;
  const DtypeReport* worst_dtype = nullptr;
  for (const DtypeReport& d : report.dtypes)
    if (!d.worst.empty() &&
        (worst == nullptr || less_with_nan_greatest(worst->worst.error_over_bound,
                                                    d.worst.front().worst.error_over_bound))) {
      worst = &d.worst.front();
      worst_dtype = &d;
    }
  if (worst != nullptr) {
    const FuzzRecord& r = m.records[worst->worst.record];
    s += "; largest error/bound " + number_text(worst->worst.error_over_bound) + " (" +
         worst_dtype->stats.dtype + " " + r.impl + " case " + std::to_string(r.index) + " " +
         worst->worst.tensor + ")";
  }
  return s;
}

}  // namespace flashproof::report
