// `flashproof fuzz` (docs/fuzz.md): parses the command line into a fuzz::CampaignSpec, runs the
// campaign, prints where its results are. Exit status 0 when no record failed or crashed, 1 when
// one did, 2 for bad input (UsageError / std::invalid_argument, one line).
#pragma once

#include "cli/args.h"

namespace flashproof::cli {

int run_fuzz_command(Args args);

}  // namespace flashproof::cli
