#include "fuzz/task_schedule.h"

#include <algorithm>
#include <limits>

#include "kernels/registry.h"

namespace flashproof::fuzz {
namespace {

constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();

}  // namespace

std::optional<CampaignTask> TaskSchedule::next(const std::function<bool()>& time_left,
                                               const std::function<void(const std::string& impl)>& unsupported) {
  while (time_left() && (!spec_.cases || next_index_ < *spec_.cases)) {
    const std::uint64_t index = next_index_;
    const std::string impl = spec_.impls[next_impl_];
    if (++next_impl_ == spec_.impls.size()) {
      next_impl_ = 0;
      // Saturating: the last shard's step past a count near 2^64 must not wrap to case 0.
      next_index_ = next_index_ > kAll - spec_.shard.count ? kAll : next_index_ + spec_.shard.count;
    }
    if (log_.done(index, impl)) continue;
    const FuzzCase f = generate_case(spec_.generator, index);
    // Fitted into what the implementation declares (core/support.h), counted; what is still
    // outside it, or refused by the implementation itself, is counted unsupported.
    bool fitted = false;
    const Case c = case_for(f.c, impl, &fitted);
    if (!refusal(*find_implementation(c.impl), c.problem, c.backward).empty()) {
      unsupported(impl);
      continue;
    }
    if (fitted) ++fitted_[impl];
    return CampaignTask{index, impl, c, f.kind, campaign_check_options(spec_, c)};
  }
  return std::nullopt;
}

std::optional<std::uint64_t> records_to_run(const CampaignSpec& spec, std::uint64_t records_held) {
  if (!spec.cases) return std::nullopt;
  const std::uint64_t cases =
      *spec.cases > spec.shard.index ? (*spec.cases - spec.shard.index - 1) / spec.shard.count + 1 : 0;
  const std::uint64_t pairs = cases > kAll / spec.impls.size() ? kAll : cases * spec.impls.size();
  return pairs - std::min<std::uint64_t>(pairs, records_held);
}

}  // namespace flashproof::fuzz
