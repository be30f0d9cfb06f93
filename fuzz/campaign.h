// A fuzz campaign (docs/fuzz.md): the cases of a seed, in this shard, over implementations,
// each checked in an isolated child process; failures shrunk and saved as case files; every
// finished record appended durably to DIR/cases.jsonl, so that running the same command again
// resumes where a killed campaign stopped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/case_generator.h"
#include "fuzz/shard.h"

namespace flashproof::fuzz {

// The longest --minutes: ten years. A longer span would overflow the clock's deadline (which then
// lies in the past, and the campaign would end at once with no case).
inline constexpr double kMaxMinutes = 10 * 365.25 * 24 * 60;

// The most children at once: the children's scratch files are named after 1024 slots.
inline constexpr int kMaxJobs = 1024;

struct CampaignSpec {
  GeneratorSettings generator;
  std::vector<std::string> impls;      // registered names
  std::optional<std::uint64_t> cases;  // case indices 0 .. cases-1 (those of this shard) ...
  std::optional<double> minutes;       // ... or as many as fit in this time (at most kMaxMinutes)
  Shard shard;
  std::string out;                     // the campaign directory
  int jobs = 1;                        // children at once
  double case_timeout = 600;           // seconds before a child counts as hung
  bool shrink = true;
  // With several implementations, those of a case share its reference and baseline (case_runner.h).
  bool share_cases = true;
  // The random query rows and key columns each check judges beside the structured sample
  // (CheckOptions::reference.sample, harness/sample_plan.h); 0: every element. Unset: the profile's
  // default, 0 for the default profile and kProductionSample for production, whose full checks
  // would take hours.
  std::optional<std::int64_t> sample;
};

inline constexpr std::int64_t kProductionSample = 64;

// The sample the campaign's checks use: spec.sample, else its profile's default. Inline for
// campaign_meta.cpp (see case_generator.h's Profile).
inline std::int64_t campaign_sample(const CampaignSpec& spec) {
  return spec.sample.value_or(spec.generator.profile == Profile::production ? kProductionSample : 0);
}

// The check options of a campaign's case: the defaults, with the campaign's sample and, when it
// samples, a sample seed derived from the case's input seed (so every implementation of the case,
// its shrinking and its replay judge the same rows and columns).
CheckOptions campaign_check_options(const CampaignSpec& spec, const Case& c);

struct CampaignResult {
  std::uint64_t run = 0;       // records produced by this run
  std::uint64_t resumed = 0;   // records found from earlier runs
  std::uint64_t pass = 0, fail = 0, out_of_domain = 0, not_judged = 0, crash = 0;  // over all records
  std::vector<std::string> failure_files;                          // saved by this run
  // (case, implementation) pairs this run passed over because the implementation does not run
  // the case (a dtype or head dim it lacks), per implementation; no record is written for them.
  std::map<std::string, std::uint64_t> unsupported;
};

// Throws std::invalid_argument (one line) for a spec that cannot run: no case budget, unknown or
// repeated implementation, an implementation that runs none of the dtypes, a directory holding
// another campaign's results (its campaign.json differs, or a record of cases.jsonl is not this
// campaign's), an unwritable directory.
CampaignResult run_campaign(const CampaignSpec& spec, std::ostream& progress, bool terminal);

// Case index -> the case, as the campaign runs it for `impl` (for tests and the benchmark).
Case campaign_case(const CampaignSpec& spec, std::uint64_t index, const std::string& impl);

// s as one word for a POSIX shell: unchanged when it holds only characters no shell treats
// specially, else in single quotes; with control characters, bash's $'...' with \xNN escapes, so
// that a printed command stays on one line and pastes back exactly.
std::string shell_quoted(std::string_view s);

}  // namespace flashproof::fuzz
