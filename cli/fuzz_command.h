// `flashproof fuzz` (docs/fuzz.md): the command line as a fuzz::CampaignSpec; the campaign run,
// and where its results are. Exit status 0 when no record failed or crashed, 1 when one did, 4 when
// none did but one is not judged and --require-judged was given, 2 for bad input (UsageError /
// std::invalid_argument, one line).
#pragma once

#include <cstdint>
#include <optional>

#include "cli/app_fwd.h"

#include "cli/generator_options.h"
#include "fuzz/campaign.h"

namespace flashproof::cli {

struct FuzzCommand {
  fuzz::CampaignSpec spec;  // impls empty: every registered implementation
  std::optional<fuzz::Shard> shard;
  std::optional<std::uint64_t> shard_count;
  GeneratorOptionsGiven given;
  bool require_judged = false;  // --require-judged: exit 4 when a record is not judged (and none failed)
};

void add_fuzz_options(CLI::App& verb, FuzzCommand& into);
// After parsing: unknown options, missing --out or --seed, options that disagree: UsageError.
void finish_fuzz_options(const CLI::App& verb, const FuzzCommand& command);

int run_fuzz_command(FuzzCommand command);

}  // namespace flashproof::cli
