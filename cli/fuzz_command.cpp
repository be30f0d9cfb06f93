#include "cli/fuzz_command.h"

#include <unistd.h>

#include <iostream>

#include "cli/check_record_output.h"
#include "core/json.h"
#include "kernels/registry.h"
#include "report/campaign_merge.h"
#include "report/judged_fractions.h"

namespace flashproof::cli {

int run_fuzz_command(FuzzCommand command) {
  fuzz::CampaignSpec& spec = command.spec;
  if (spec.impls.empty())
    for (AttentionImpl* impl : implementations()) spec.impls.push_back(impl->name());
  spec.shard = command.shard ? *command.shard
                             : fuzz::shard_from_environment(command.shard_count).value_or(fuzz::Shard{});
  const fuzz::CampaignResult r = fuzz::run_campaign(spec, std::cerr, ::isatty(STDERR_FILENO) != 0);
  std::cout << "fuzz: shard " << spec.shard.text() << ": " << r.run << " records this run, " << r.resumed
            << " from earlier runs; over all: " << r.pass << " pass, " << r.fail << " fail, " << r.out_of_domain
            << " out-of-domain, " << r.not_judged << " not judged, " << r.crash << " crash; second tier: "
            << r.pass_baseline_rule << " pass (baseline rule), " << r.fail_baseline_rule << " fail (baseline rule)\n";
  // What the certified tier reached, by logit class and tensor (docs/reports.md "Judged").
  try {
    const report::MergedCampaigns merged = report::merge_campaigns({spec.out});
    std::cout << "fuzz: " << report::judged_summary(report::judged_fractions(merged.records)) << "\n";
  } catch (const std::invalid_argument&) {  // no valid record (nothing ran): nothing to say
  }
  if (!r.unsupported.empty()) {
    // Pairs with no record: say so, or a campaign over an implementation that lacks a dtype or a
    // head dim would look smaller than asked for no visible reason.
    std::cout << "fuzz: not run, the implementation does not support the case (no record):";
    const char* sep = " ";
    for (const auto& [impl, n] : r.unsupported) std::cout << sep << impl << " " << n, sep = ", ";
    std::cout << "\n";
  }
  if (!r.fitted.empty()) {
    std::cout << "fuzz: fitted into the implementation's declared support (drawn, then moved):";
    const char* sep = " ";
    for (const auto& [impl, n] : r.fitted) std::cout << sep << impl << " " << n, sep = ", ";
    std::cout << "\n";
  }
  for (const std::string& f : r.failure_files)
    std::cout << "fuzz: failure saved: flashproof replay " << fuzz::shell_quoted(f) << "\n";
  std::cout << "fuzz: results in " << printable(spec.out + "/cases.jsonl") << "; report: flashproof report "
            << fuzz::shell_quoted(spec.out) << " --out " << fuzz::shell_quoted(spec.out + "/report") << "\n";
  if (r.fail + r.crash > 0) return 1;
  if (r.fail_baseline_rule > 0) return kExitBaselineRuleFail;
  return command.require_judged && r.not_judged > 0 ? kExitNotJudged : 0;
}

}  // namespace flashproof::cli
