// A fuzz campaign (docs/fuzz.md): the cases of a seed, in this shard, over implementations,
// each checked in an isolated child process; failures shrunk and saved as case files; every
// finished record appended durably to DIR/cases.jsonl, so that running the same command again
// resumes where a killed campaign stopped.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "fuzz/campaign_spec.h"
#include "fuzz/shell_quote.h"  // the command prints the replay lines of saved failures

namespace flashproof::fuzz {

struct CampaignResult {
  std::uint64_t run = 0;       // records produced by this run
  std::uint64_t resumed = 0;   // records found from earlier runs
  std::uint64_t pass = 0, fail = 0, out_of_domain = 0, not_judged = 0, crash = 0;  // over all records
  std::uint64_t pass_baseline_rule = 0, fail_baseline_rule = 0;  // the second tier's (docs/spec.md "Verdicts")
  std::vector<std::string> failure_files;                          // saved by this run
  // (case, implementation) pairs this run passed over because the implementation does not run
  // the case (a dtype or head dim it lacks), per implementation; no record is written for them.
  std::map<std::string, std::uint64_t> unsupported;
  // Cases this run handed to an implementation after fitting their problem into its declared
  // support (core/support.h fit_to_support), per implementation: drawn, then moved, never dropped.
  std::map<std::string, std::uint64_t> fitted;
};

// Throws std::invalid_argument (one line) for a spec that cannot run (check_campaign_spec), a
// directory holding another campaign's results (its campaign.json differs, or a record of
// cases.jsonl is not this campaign's), a directory another run holds, an unwritable directory.
CampaignResult run_campaign(const CampaignSpec& spec, std::ostream& progress, bool terminal);

}  // namespace flashproof::fuzz
