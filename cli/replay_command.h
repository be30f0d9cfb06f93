// `flashproof replay FILE`: a saved case again, with its saved check options (docs/case-files.md).
#pragma once

#include <string>

#include "cli/app_fwd.h"

#include "cli/case_limits.h"

namespace flashproof::cli {

struct ReplayCommand {
  std::string file;
  bool json = false;
  bool require_judged = false;  // --require-judged: a not-judged check exits 4
  int threads = 0;  // the reference's host threads; 0: every hardware thread
  CaseLimits limits;
};

void add_replay_options(CLI::App& verb, ReplayCommand& into);
// After parsing: throws UsageError when no case file, or more than one, is given.
void finish_replay_options(const CLI::App& verb, const ReplayCommand& command);

// Exit status 0 when the case passes (or the property holds) now, 1 when it fails, 4 when the
// check is not judged and --require-judged was given.
int run_replay_command(const ReplayCommand& command);

}  // namespace flashproof::cli
