#include "report/report_model.h"

#include <cctype>
#include <filesystem>
#include <set>

namespace flashproof::report {
namespace {

// "fp16-fa2-17.json", with "-2", "-3", ... when another listed case (another campaign's case 17)
// took that name.
std::string unique_case_file_name(const FuzzRecord& r, std::set<std::string>& taken) {
  // The names come from the records: keep them to characters safe in a file name.
  std::string stem = r.dtype + "-" + r.impl + "-" + std::to_string(r.index);
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  std::string name = stem + ".json";
  for (int k = 2; !taken.insert(name).second; ++k) name = stem + "-" + std::to_string(k) + ".json";
  return name;
}

}  // namespace

std::string shell_word(const std::string& s) {
  const bool safe = !s.empty() && s.find_first_not_of(
                                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "0123456789_./-+:=@%,") == std::string::npos;
  if (safe) return s;
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string replay_line(const FuzzRecord& r, const std::string& path) {
  if (r.impl.rfind("python:", 0) != 0) return "flashproof replay " + shell_word(path);
  // A Python callable exists only in its user's program: the command cannot load it, so the line
  // is the call that re-runs the case there (python/README.md, flashproof.replay). A JSON string
  // is a valid Python string literal.
  const json::Value* backward = r.case_file.is_object() ? json::find(r.case_file, "backward") : nullptr;
  const bool runs_backward = backward != nullptr && backward->is_boolean() && backward->get<bool>();
  return "flashproof.replay(<your forward>, " + json::write(json::Value(path)) +
         (runs_backward ? ", backward=<your backward>)" : ")");
}

Report build_report(MergedCampaigns merged, const std::string& out_dir) {
  Report report;
  report.out_dir = out_dir;
  // A saved failure's replay line, as its campaign wrote it, names the command, which cannot run a
  // Python callable: for those, the Python call on the same file.
  for (FuzzRecord& r : merged.records)
    if (!r.failure_file.empty() && r.impl.rfind("python:", 0) == 0)
      r.replay = replay_line(r, (std::filesystem::path(r.source) / r.failure_file).string());
  report.judged = judged_fractions(merged.records);
  std::set<std::string> taken;
  for (DtypeStats& stats : campaign_statistics(merged.records)) {
    DtypeReport d;
    for (const WorstCase& w : worst_cases(merged.records, stats.dtype, kWorstCasesPerDtype)) {
      ListedWorstCase listed{w, "", ""};
      const FuzzRecord& r = merged.records[w.record];
      if (r.case_file.is_object()) {
        const std::string name = unique_case_file_name(r, taken);
        listed.case_file = "cases/" + name;
        const auto path = std::filesystem::path(out_dir) / "cases" / name;
        listed.replay = replay_line(r, path.string());
      }
      d.worst.push_back(std::move(listed));
    }
    d.failures = failures(merged.records, stats.dtype);
    d.largest_finite = largest_finite_error_over_bound(merged.records, stats.dtype);
    d.stats = std::move(stats);
    report.dtypes.push_back(std::move(d));
  }
  std::set<std::string> seeds;
  for (const FuzzRecord& r : merged.records) seeds.insert(r.campaign_seed);
  report.several_campaigns = seeds.size() > 1;
  report.merged = std::move(merged);
  return report;
}

}  // namespace flashproof::report
