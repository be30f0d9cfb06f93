// Everything one report shows, computed once and rendered by results.json, summary.md and
// index.html alike, so that the three agree.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/campaign_merge.h"
#include "report/campaign_statistics.h"
#include "report/judged_fractions.h"
#include "report/worst_cases.h"

namespace flashproof::report {

struct ListedWorstCase {
  WorstCase worst;
  std::string
      case_file;  // "cases/NAME.json" under the report directory; "" when the record has no case
  std::string replay;  // replay_line(record, "OUT/cases/NAME.json"); "" without a case file
};

struct DtypeReport {
  DtypeStats stats;
  std::vector<ListedWorstCase> worst;  // at most kWorstCasesPerDtype
  std::vector<std::size_t> failures;   // positions in merged.records: fail and crash
  // The largest error/bound over finite values (largest_finite_error_over_bound): the headline's.
  std::optional<WorstCase> largest_finite;
};

struct Report {
  MergedCampaigns merged;
  std::string out_dir;  // as given to --out; the replay commands name it
  std::vector<DtypeReport> dtypes;
  JudgedFractions judged;  // over every record: by logit class and per tensor (first screen)
  bool several_campaigns = false;  // records of more than one campaign seed: labels name the seed
};

// The statistics, the worst cases and their case file names (unique in the report).
Report build_report(MergedCampaigns merged, const std::string& out_dir);

// The line that re-runs the record's case saved at path: "flashproof replay PATH", or for an
// implementation "python:NAME" (a Python callable, which the command cannot load) the Python call
// `flashproof.replay(<your forward>, "PATH", backward=<your backward>)` (backward only when the case
// runs it).
std::string replay_line(const FuzzRecord& r, const std::string& path);

// A path as one shell word: unchanged when it holds only safe characters, else single-quoted.
std::string shell_word(const std::string& s);

}  // namespace flashproof::report
