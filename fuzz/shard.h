// Sharding a campaign over a cluster: shard i of n runs the cases whose index is i modulo n (i, i + n,
// i + 2n, ...: fuzz/campaign.cpp), so the n shards together run exactly the unsharded campaign's
// cases, each once, whatever n is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashproof::fuzz {

struct Shard {
  std::uint64_t index = 0, count = 1;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// "i/n" with 0 <= i < n; throws std::invalid_argument with one line otherwise.
Shard parse_shard(std::string_view text);

// The shard a cluster scheduler assigned, when --shard is not given:
// - Slurm job arrays: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN (0 when unset) of
//   SLURM_ARRAY_TASK_COUNT (or `count` when given);
// - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX of `count` (required: the Job's completions).
// nullopt when neither is set. Throws std::invalid_argument for values that make no shard.
std::optional<Shard> shard_from_environment(std::optional<std::uint64_t> count);

}  // namespace flashproof::fuzz
