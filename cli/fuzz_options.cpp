// fuzz's command line (cli/fuzz_command.h).
#include "cli/fuzz_command.h"

#include "cli/option_syntax.h"
#include "cli/option_values.h"
#include "cli/value_option.h"

namespace flashproof::cli {

void add_fuzz_options(CLI::App& verb, FuzzCommand& into) {
  fuzz::CampaignSpec& spec = into.spec;
  using S = const std::string&;
  add_value_option(verb, "--impl", "all|I[,I...]", "the implementations to run (default all; see `flashproof list`)",
                   [&](S n, S v) { spec.impls = v == "all" ? std::vector<std::string>{} : split_list(n, v); });
  add_generator_options(verb, spec.generator, into.given);
  add_value_option(verb, "--cases", "N", "the campaign's size in cases (this or --minutes)",
                   [&](S n, S v) { spec.cases = static_cast<std::uint64_t>(parse_count(n, v)); });
  add_value_option(verb, "--minutes", "M", "the campaign's size in minutes (this or --cases)", [&](S n, S v) {
    const double m = parse_number<double>(n, v);
    if (!(m > 0)) throw UsageError("--minutes must be positive, got " + v);
    spec.minutes = m;
  });
  add_value_option(verb, "--shard", "i/n", "run shard i of n (default: the cluster scheduler's, or 0/1; docs/fuzz.md)",
                   [&](S, S v) { into.shard = fuzz::parse_shard(v); });
  add_value_option(verb, "--shard-count", "n", "the number of shards, the index from the scheduler's environment",
                   [&](S n, S v) { into.shard_count = static_cast<std::uint64_t>(parse_count(n, v)); });
  add_value_option(verb, "--jobs", "J", "cases run at once (default 1)",
                   [&](S n, S v) { spec.jobs = static_cast<int>(parse_count(n, v, fuzz::kMaxJobs)); });
  add_value_option(verb, "--case-timeout", "SECONDS", "a case running longer counts as hung, a crash (default 600)",
                   [&](S n, S v) { spec.case_timeout = parse_count(n, v); });
  verb.add_flag_callback("--no-shrink", [&] { spec.shrink = false; }, "save a failing case as found, without shrinking it");
  verb.add_flag("--require-judged", into.require_judged,
                "exit status 4 when no record failed or crashed but one is not-judged (instead of 0)");
  add_value_option(verb, "--sample", "N",
                   "judge N random rows and columns per check beside the structured ones (0: every element; "
                   "default 0, production 64)",
                   [&](S n, S v) {
                     const auto count = parse_number<std::int64_t>(n, v);
                     if (count < 0) throw UsageError("--sample must be >= 0 (0: every element), got " + v);
                     spec.sample = count;
                   });
  add_value_option(verb, "--out", "DIR", "the campaign directory: records, failures, progress (required); a campaign started again there resumes",
                   [&](S, S v) { spec.out = v; });
}

void finish_fuzz_options(const CLI::App& verb, const FuzzCommand& command) {
  for (const std::string& extra : unexpected_arguments(verb))
    throw UsageError("unknown option '" + extra + "' for fuzz");
  const fuzz::CampaignSpec& spec = command.spec;
  if (spec.out.empty()) throw UsageError("fuzz needs --out DIR (the campaign directory)");
  if (!command.given.seed) throw UsageError("fuzz needs --seed S (the campaign is a function of it)");
  check_generator_options(spec.generator, command.given);
  if (command.shard && command.shard_count && command.shard->count != *command.shard_count)
    throw UsageError("--shard " + command.shard->text() + " and --shard-count " +
                     std::to_string(*command.shard_count) + " disagree");
}

}  // namespace flashproof::cli
