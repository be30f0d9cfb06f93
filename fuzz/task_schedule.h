// The order in which a campaign runs its (case, implementation) tasks: the cases of its shard in
// index order, each with every implementation in the order given, passing over those cases.jsonl
// already holds (a resumed run) and those the implementation does not run.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "fuzz/campaign_spec.h"
#include "fuzz/results_log.h"

namespace flashproof::fuzz {

struct CampaignTask {
  std::uint64_t index;
  std::string impl;
  Case c;               // campaign_case(spec, index, impl)
  std::string kind;     // the generator's kind of case
  CheckOptions options; // campaign_check_options of the case
};

class TaskSchedule {
 public:
  TaskSchedule(const CampaignSpec& spec, const ResultsLog& log) : spec_(spec), log_(log), next_index_(spec.shard.index) {}

  // The next task, or nullopt when the shard's cases are spent or time_left() says no. Each pair
  // passed over because its implementation does not run the case is reported to `unsupported`.
  std::optional<CampaignTask> next(const std::function<bool()>& time_left,
                                   const std::function<void(const std::string& impl)>& unsupported);

  // Whether every task of case `index` has been handed out (the schedule has moved past it).
  bool past(std::uint64_t index) const { return index < next_index_; }

  // Per implementation: the cases handed out after fitting their problem into its declared support.
  const std::map<std::string, std::uint64_t>& fitted() const { return fitted_; }

 private:
  const CampaignSpec& spec_;
  const ResultsLog& log_;
  std::uint64_t next_index_;
  std::size_t next_impl_ = 0;
  std::map<std::string, std::uint64_t> fitted_;
};

// The records a --cases campaign's run still has to produce, given the records cases.jsonl holds:
// counted without generating a case (a count of 2^63 cases must start at once). Unsupported pairs
// are not known yet: the caller drops them as the schedule finds them. nullopt for --minutes.
std::optional<std::uint64_t> records_to_run(const CampaignSpec& spec, std::uint64_t records_held);

}  // namespace flashproof::fuzz
