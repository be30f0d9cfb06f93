#include "report/judged_fractions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/verdict.h"

namespace flashproof::report {
namespace {

void tally(JudgedCount& c, CaseStatus s) {
  ++c.total;
  c.judged += s == CaseStatus::pass || s == CaseStatus::fail;
  c.baseline_rule += s == CaseStatus::pass_baseline_rule || s == CaseStatus::fail_baseline_rule;
  c.not_judged += s == CaseStatus::not_judged;
  c.out_of_domain += s == CaseStatus::out_of_domain;
  c.crash += s == CaseStatus::crash;
}

int tensor_rank(const std::string& name) {
  static const char* const order[] = {"O", "LSE", "dQ", "dK", "dV"};
  for (int k = 0; k < 5; ++k)
    if (name == order[k]) return k;
  return 5;
}

std::string percent(std::size_t part, std::size_t whole) {
  if (whole == 0) return "-";
  std::ostringstream s;
  s << static_cast<long long>(std::floor(100.0 * static_cast<double>(part) / static_cast<double>(whole))) << "%";
  return s.str();
}

}  // namespace

JudgedFractions judged_fractions(const std::vector<FuzzRecord>& records) {
  JudgedFractions f;
  f.all.label = "all";
  std::map<std::string, JudgedCount> classes, tensors;
  for (const FuzzRecord& r : records) {
    tally(f.all, r.status);
    const std::string cls = r.logit_scale ? logit_class(*r.logit_scale) : "unknown";
    JudgedCount& c = classes[cls];
    c.label = cls;
    tally(c, r.status);
    for (const TensorResult& t : r.tensors) {
      JudgedCount& x = tensors[t.name];
      x.label = t.name;
      tally(x, t.verdict ? case_status(*t.verdict) : CaseStatus::crash);
    }
  }
  for (const char* name : kLogitClasses)
    if (const auto it = classes.find(name); it != classes.end()) f.by_class.push_back(it->second);
  if (const auto it = classes.find("unknown"); it != classes.end()) f.by_class.push_back(it->second);
  for (const auto& [name, c] : tensors) f.by_tensor.push_back(c);
  std::stable_sort(f.by_tensor.begin(), f.by_tensor.end(),
                   [](const JudgedCount& a, const JudgedCount& b) { return tensor_rank(a.label) < tensor_rank(b.label); });
  return f;
}

std::string judged_summary(const JudgedFractions& f) {
  std::ostringstream s;
  s << "judged (pass or fail) " << f.all.judged << " of " << f.all.total << " records (" << percent(f.all.judged, f.all.total)
    << "), by the baseline rule " << f.all.baseline_rule << "; by the largest |scale q.k|:";
  const char* sep = " ";
  for (const JudgedCount& c : f.by_class) s << sep << c.label << " " << c.judged << "/" << c.total, sep = ", ";
  s << "; per tensor:";
  sep = " ";
  for (const JudgedCount& c : f.by_tensor) s << sep << c.label << " " << c.judged << "/" << c.total, sep = ", ";
  return s.str();
}

}  // namespace flashproof::report
