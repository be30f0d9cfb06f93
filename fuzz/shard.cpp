#include "fuzz/shard.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace flashproof::fuzz {
namespace {

std::optional<std::uint64_t> whole(std::string_view text) {
  std::uint64_t x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return x;
}

std::optional<std::uint64_t> env_number(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return std::nullopt;
  if (auto x = whole(v)) return x;
  throw std::invalid_argument(std::string(name) + " is '" + v + "', not a non-negative integer");
}

Shard checked(std::uint64_t index, std::uint64_t count, const std::string& from) {
  if (count == 0) throw std::invalid_argument(from + ": the shard count must be at least 1");
  if (index >= count)
    throw std::invalid_argument(from + ": shard index " + std::to_string(index) + " is not below the count " +
                                std::to_string(count));
  return Shard{index, count};
}

}  // namespace

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto i = slash == std::string_view::npos ? std::nullopt : whole(text.substr(0, slash));
  const auto n = slash == std::string_view::npos ? std::nullopt : whole(text.substr(slash + 1));
  if (!i || !n) throw std::invalid_argument("--shard expects i/n (e.g. 3/16), got '" + std::string(text) + "'");
  return checked(*i, *n, "--shard " + std::string(text));
}

std::optional<Shard> shard_from_environment(std::optional<std::uint64_t> count) {
  if (const auto task = env_number("SLURM_ARRAY_TASK_ID")) {
    const std::uint64_t min = env_number("SLURM_ARRAY_TASK_MIN").value_or(0);
    const auto array_count = env_number("SLURM_ARRAY_TASK_COUNT");
    const auto n = count ? count : array_count;
    if (!n) throw std::invalid_argument("SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT; give --shard-count");
    if (*task < min) throw std::invalid_argument("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN");
    // A stepped array (--array=10-20:2) numbers its tasks min, min + step, ..., max; the shard is
    // the task's place in that sequence. An index list that is not evenly spaced (--array=1,2,4)
    // has no such place: refused, since a guessed one would leave some shards unrun.
    std::uint64_t step = 1;
    if (const auto max = env_number("SLURM_ARRAY_TASK_MAX"); max && array_count && *array_count > 1) {
      if (*max < min || (*max - min) % (*array_count - 1) != 0)
        throw std::invalid_argument("Slurm array indices " + std::to_string(min) + "-" + std::to_string(*max) + " in " +
                                    std::to_string(*array_count) +
                                    " tasks are not evenly spaced (an index list?); give --shard i/n");
      step = std::max<std::uint64_t>((*max - min) / (*array_count - 1), 1);
    }
    if ((*task - min) % step != 0)
      throw std::invalid_argument("SLURM_ARRAY_TASK_ID " + std::to_string(*task) + " is not " +
                                  std::to_string(min) + " plus a multiple of the array's step " +
                                  std::to_string(step) + " (an index list?); give --shard i/n");
    return checked((*task - min) / step, *n, "Slurm array task");
  }
  if (const auto index = env_number("JOB_COMPLETION_INDEX")) {
    if (!count)
      throw std::invalid_argument("JOB_COMPLETION_INDEX is set: give the Job's completions as --shard-count");
    return checked(*index, *count, "Kubernetes Indexed Job");
  }
  return std::nullopt;
}

}  // namespace flashproof::fuzz
