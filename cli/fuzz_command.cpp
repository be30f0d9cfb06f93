#include "cli/fuzz_command.h"

#include <unistd.h>

#include <iostream>
#include <optional>

#include "cli/generator_options.h"
#include "core/json.h"
#include "fuzz/campaign.h"
#include "kernels/registry.h"

namespace flashproof::cli {

int run_fuzz_command(Args a) {
  fuzz::CampaignSpec spec;
  std::optional<fuzz::Shard> shard;
  std::optional<std::uint64_t> shard_count;
  GeneratorOptionsGiven given;
  while (!a.done()) {
    Arg item(a);
    const std::string_view arg = item.name;
    if (parse_generator_option(item, spec.generator, given)) {
      continue;
    } else if (arg == "--impl") {
      const std::string_view v = item.next();
      spec.impls.clear();
      if (v == "all") {
        for (AttentionImpl* impl : implementations()) spec.impls.push_back(impl->name());
      } else {
        spec.impls = split_list(arg, v);
      }
    } else if (arg == "--cases") {
      spec.cases = static_cast<std::uint64_t>(parse_count(arg, item.next()));
    } else if (arg == "--minutes") {
      const std::string_view v = item.next();
      const double m = parse_number<double>(arg, v);
      if (!(m > 0)) throw UsageError("--minutes must be positive, got " + std::string(v));
      spec.minutes = m;
    } else if (arg == "--shard") {
      shard = fuzz::parse_shard(item.next());
    } else if (arg == "--shard-count") {
      shard_count = static_cast<std::uint64_t>(parse_count(arg, item.next()));
    } else if (arg == "--jobs") {
      spec.jobs = static_cast<int>(parse_count(arg, item.next(), fuzz::kMaxJobs));
    } else if (arg == "--case-timeout") {
      spec.case_timeout = parse_count(arg, item.next());
    } else if (arg == "--sample") {
      const std::string_view v = item.next();
      const auto n = parse_number<std::int64_t>(arg, v);
      if (n < 0) throw UsageError("--sample must be >= 0 (0: every element), got " + std::string(v));
      spec.sample = n;
    } else if (arg == "--no-shrink") {
      item.flag();
      spec.shrink = false;
    } else if (arg == "--out") {
      spec.out = std::string(item.next());
    } else {
      throw UsageError("unknown option '" + std::string(arg) + "' for fuzz");
    }
  }
  if (spec.out.empty()) throw UsageError("fuzz needs --out DIR (the campaign directory)");
  if (!given.seed) throw UsageError("fuzz needs --seed S (the campaign is a function of it)");
  check_generator_options(spec.generator, given);
  if (spec.impls.empty())
    for (AttentionImpl* impl : implementations()) spec.impls.push_back(impl->name());
  if (shard && shard_count && shard->count != *shard_count)
    throw UsageError("--shard " + shard->text() + " and --shard-count " + std::to_string(*shard_count) + " disagree");
  spec.shard = shard ? *shard : fuzz::shard_from_environment(shard_count).value_or(fuzz::Shard{});
  const fuzz::CampaignResult r = fuzz::run_campaign(spec, std::cerr, ::isatty(STDERR_FILENO) != 0);
  std::cout << "fuzz: shard " << spec.shard.text() << ": " << r.run << " records this run, " << r.resumed
            << " from earlier runs; over all: " << r.pass << " pass, " << r.fail << " fail, " << r.out_of_domain
            << " out-of-domain, " << r.not_judged << " not judged, " << r.crash << " crash\n";
  if (!r.unsupported.empty()) {
    // Pairs with no record: say so, or a campaign over an implementation that lacks a dtype or a
    // head dim would look smaller than asked for no visible reason.
    std::cout << "fuzz: not run, the implementation does not support the case (no record):";
    const char* sep = " ";
    for (const auto& [impl, n] : r.unsupported) std::cout << sep << impl << " " << n, sep = ", ";
    std::cout << "\n";
  }
  for (const std::string& f : r.failure_files)
    std::cout << "fuzz: failure saved: flashproof replay " << fuzz::shell_quoted(f) << "\n";
  std::cout << "fuzz: results in " << printable(spec.out + "/cases.jsonl") << "; report: flashproof report "
            << fuzz::shell_quoted(spec.out) << " --out " << fuzz::shell_quoted(spec.out + "/report") << "\n";
  return r.fail + r.crash > 0 ? 1 : 0;
}

}  // namespace flashproof::cli
