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
// - Slurm job arrays: the task's place in SLURM_ARRAY_TASK_MIN (0 when unset), min + step, ...,
//   SLURM_ARRAY_TASK_MAX, of SLURM_ARRAY_TASK_COUNT (or `count` when given); step is
//   (max - min) / (count - 1), 1 without a max; indices that are not evenly spaced are refused;
// - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX of `count` (required: the Job's completions).
// nullopt when neither is set. Throws std::invalid_argument for values that make no shard.
std::optional<Shard> shard_from_environment(std::optional<std::uint64_t> count);

}  // namespace flashproof::fuzz
