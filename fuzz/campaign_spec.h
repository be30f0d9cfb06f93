// What a fuzz campaign is asked to run (docs/fuzz.md): the generator's settings, the
// implementations, the budget, the shard and the directory, with the limits the command enforces,
// and the case and check options each (case index, implementation) gets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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
// campaign_meta.cpp, which the parser fuzzer builds alone (see case_generator.h's Profile).
inline std::int64_t campaign_sample(const CampaignSpec& spec) {
  return spec.sample.value_or(spec.generator.profile == Profile::production ? kProductionSample : 0);
}

// Throws std::invalid_argument (one line) for a spec that cannot run: no case budget or two,
// minutes out of range, no or a repeated or unknown implementation, an implementation that runs
// none of the dtypes, jobs, limits or sample out of range.
void check_campaign_spec(const CampaignSpec& spec);

// The check options of a campaign's case: the defaults, with the campaign's sample and, when it
// samples, a sample seed derived from the case's input seed (so every implementation of the case,
// its shrinking and its replay judge the same rows and columns).
CheckOptions campaign_check_options(const CampaignSpec& spec, const Case& c);

// Case index -> the case, as the campaign runs it for `impl` (case_for).
Case campaign_case(const CampaignSpec& spec, std::uint64_t index, const std::string& impl);
// A generated case as the campaign runs it for `impl`: a quarter of a tiled kernel's cases, drawn
// from the case's seed, run its other compiled tile set (kernels/registry.h tile_variant) where
// that set declares the case as drawn (not, say, the KV caches only the shipped tiles run): the
// record keeps `impl`, its case (and so its replay) names the variant. The problem is then fitted
// into what that implementation declares (core/support.h fit_to_support); *fitted says whether it
// moved.
Case case_for(Case c, const std::string& impl, bool* fitted = nullptr);

}  // namespace flashproof::fuzz
