#include "fuzz/campaign_spec.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/rng.h"
#include "kernels/registry.h"

namespace flashproof::fuzz {
namespace {

// The sample's seed: a stream of the case's input seed that no input tensor uses.
constexpr std::uint64_t kSampleSeedStream = 0x73616d706c65;  // "sample"
// Whether a tiled kernel's case runs its other compiled tile set: another stream of that seed.
constexpr std::uint64_t kTileSetStream = 0x74696c6573;  // "tiles"

}  // namespace

void check_campaign_spec(const CampaignSpec& spec) {
  if (!spec.cases && !spec.minutes) throw std::invalid_argument("give the campaign's size: --cases N or --minutes M");
  if (spec.cases && spec.minutes) throw std::invalid_argument("give --cases or --minutes, not both");
  if (spec.minutes && !(*spec.minutes > 0)) throw std::invalid_argument("--minutes must be positive");
  if (spec.minutes && !(*spec.minutes <= kMaxMinutes))
    throw std::invalid_argument((std::ostringstream() << "--minutes must be at most " << static_cast<long long>(kMaxMinutes)
                                                      << " (ten years), got " << *spec.minutes)
                                    .str());
  if (spec.impls.empty()) throw std::invalid_argument("no implementation to fuzz");
  for (auto it = spec.impls.begin(); it != spec.impls.end(); ++it)
    if (std::find(spec.impls.begin(), it, *it) != it)  // it would run, and be recorded, twice
      throw std::invalid_argument("implementation '" + *it + "' is given twice");
  if (spec.generator.dtypes.empty()) throw std::invalid_argument("no dtype to fuzz");
  if (spec.jobs < 1 || spec.jobs > kMaxJobs)
    throw std::invalid_argument("--jobs must be between 1 and " + std::to_string(kMaxJobs));
  if (spec.generator.max_seqlen < 1 || spec.generator.max_work < 1)
    throw std::invalid_argument("--max-seqlen and --max-work must be at least 1");
  if (spec.sample && *spec.sample < 0)
    throw std::invalid_argument("--sample must be >= 0 (0: every element), got " + std::to_string(*spec.sample));
  for (const std::string& name : spec.impls) {
    const AttentionImpl* impl = find_implementation(name);
    if (impl == nullptr) throw std::invalid_argument("unknown implementation '" + name + "' (flashproof list)");
    bool runs_one = false;
    for (DType t : spec.generator.dtypes) {
      Problem p;
      p.dtype = t;
      fit_to_support(p, impl->declared_support());  // a dtype is asked about on a shape it declares
      runs_one = runs_one || refusal(*impl, p, false).empty();
    }
    if (!runs_one) throw std::invalid_argument(name + " runs none of the dtypes asked");
  }
}

CheckOptions campaign_check_options(const CampaignSpec& spec, const Case& c) {
  CheckOptions options;
  options.reference.sample = campaign_sample(spec);
  // Only when sampling: an unsampled campaign's records keep the options they always had.
  if (options.reference.sample > 0) options.reference.sample_seed = derive(c.seed, kSampleSeedStream);
  return options;
}

Case campaign_case(const CampaignSpec& spec, std::uint64_t index, const std::string& impl) {
  return case_for(generate_case(spec.generator, index).c, impl);
}

Case case_for(Case c, const std::string& impl, bool* fitted) {
  c.impl = impl;
  const AttentionImpl* base = find_implementation(impl);
  const AttentionImpl* variant = base == nullptr ? nullptr : tile_variant(*base);
  // The other tile set only where it takes the case as drawn: fitted, a KV cache, a soft cap or
  // ALiBi that only the shipped tiles declare would be dropped, and the case lost to what it draws.
  if (variant != nullptr && derive(c.seed, kTileSetStream) % 4 == 0 &&
      unsupported_by(variant->declared_support(), c.problem, c.backward).empty())
    c.impl = variant->name();
  const AttentionImpl* target = find_implementation(c.impl);
  const bool moved = target != nullptr && fit_to_support(c.problem, target->declared_support());
  if (fitted != nullptr) *fitted = moved;
  return c;
}

}  // namespace flashproof::fuzz
