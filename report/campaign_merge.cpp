#include "report/campaign_merge.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "report/json_values.h"

namespace flashproof::report {
namespace {

namespace fs = std::filesystem;

// Messages about skipped lines kept per input; the rest are only counted.
constexpr std::size_t kSkipMessagesPerInput = 3;

using RecordKey = std::tuple<std::string, long long, std::string, std::string>;

json::Value read_campaign_json(const fs::path& dir, std::vector<std::string>& warnings) {
  const fs::path path = dir / "campaign.json";
  std::ifstream in(path);
  if (!in) {
    warnings.push_back(path.string() + ": missing; going on without the campaign's parameters");
    return nullptr;
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const std::invalid_argument& e) {
    warnings.push_back(path.string() + ": " + e.what() + "; ignored");
    return nullptr;
  }
}

// ended.json (fuzz/campaign.cpp, write_end_marker). Only asked of inputs with a campaign.json: one
// without has been warned about already.
json::Value read_end_marker(const fs::path& dir, const json::Value& campaign, std::vector<std::string>& warnings) {
  if (campaign.is_null()) return nullptr;
  const fs::path path = dir / "ended.json";
  std::ifstream in(path);
  if (!in) {
    warnings.push_back(dir.string() +
                       ": no ended.json: the campaign was killed, is still running, or predates end "
                       "markers; the report holds the cases it had finished");
    return nullptr;
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    json::Value ended = json::parse(text.str());
    if (read_string(json::find(ended, "format")) == "flashproof-campaign-end") return ended;
    warnings.push_back(path.string() + ": not a campaign end marker; ignored");
  } catch (const std::invalid_argument& e) {
    warnings.push_back(path.string() + ": " + e.what() + "; ignored");
  }
  return nullptr;
}

// One warning per campaign (seed and shard count, from campaign.json) whose shards are not all
// among the inputs: a cluster's merge job runs after the array whatever became of its tasks.
void warn_about_missing_shards(MergedCampaigns& merged) {
  std::map<std::pair<std::string, long long>, std::set<long long>> shards;
  for (const CampaignInput& in : merged.inputs) {
    const json::Value* shard = campaign_parameter(in.campaign, "shard");
    if (shard == nullptr || !shard->is_object()) continue;
    const long long index = read_integer(json::find(*shard, "index")).value_or(-1);
    const long long count = read_integer(json::find(*shard, "count")).value_or(-1);
    if (count < 2 || index < 0 || index >= count) continue;
    shards[{read_string(campaign_parameter(in.campaign, "seed")), count}].insert(index);
  }
  constexpr std::size_t kListed = 8;
  for (const auto& [key, present] : shards) {
    const auto& [seed, count] = key;
    const long long missing = count - static_cast<long long>(present.size());
    if (missing == 0) continue;
    // The first few missing indices; the loop stops there (a count can be as large as 2^63).
    std::string list;
    long long listed = 0;
    for (long long i = 0; i < count && listed < static_cast<long long>(kListed); ++i)
      if (!present.count(i)) list += (listed++ ? ", " : "") + std::to_string(i) + "/" + std::to_string(count);
    if (missing > listed) list += " and " + std::to_string(missing - listed) + " more";
    merged.warnings.push_back("campaign seed " + seed + " in " + std::to_string(count) + " shards: " +
                              std::to_string(missing) + " not among the inputs (" + list +
                              "); the report covers part of the campaign");
  }
}

void read_cases(const fs::path& dir, CampaignInput& input, std::set<RecordKey>& seen,
                MergedCampaigns& merged) {
  const fs::path path = dir / "cases.jsonl";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw std::invalid_argument(path.string() + " does not exist (not a campaign directory?)");
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read " + path.string());
  const std::string seed = read_string(campaign_parameter(input.campaign, "seed"));
  // A campaign names itself in campaign.json and in each record; a record naming
  // another campaign (a cases.jsonl copied between directories) is not this directory's.
  const json::Value* id = json::find(input.campaign, "campaign_id");
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const json::Value j = json::parse(line);
      // Of another type (the number 5, the string "5"; 5 and 5.0) or value: another campaign's.
      if (const json::Value* theirs = json::find(j, "campaign_id");
          id != nullptr && theirs != nullptr && (theirs->type() != id->type() || *theirs != *id))
        throw std::invalid_argument("a record of campaign " + shown(scalar_text(theirs)) +
                                    ", not of this directory's " + shown(scalar_text(id)));
      FuzzRecord r = fuzz_record_from_json(j);
      r.source = input.dir;
      if (r.campaign_seed.empty()) r.campaign_seed = seed;
      if (!seen.insert({r.campaign_seed, r.index, r.impl, r.case_seed}).second) {
        ++input.duplicates;
        continue;
      }
      ++input.records;
      merged.records.push_back(std::move(r));
    } catch (const std::invalid_argument& e) {
      if (merged.first_skip.empty())
        merged.first_skip = path.string() + " line " + std::to_string(number) + ": " + e.what();
      if (++input.skipped_lines <= kSkipMessagesPerInput)
        merged.warnings.push_back(path.string() + " line " + std::to_string(number) +
                                  ": skipped: " + e.what());
    }
  }
  if (input.skipped_lines > kSkipMessagesPerInput)
    merged.warnings.push_back(path.string() + ": " +
                              std::to_string(input.skipped_lines - kSkipMessagesPerInput) +
                              " more lines skipped");
}

}  // namespace

const json::Value* campaign_parameter(const json::Value& campaign, std::string_view key) {
  if (const json::Value* v = json::find(campaign, key)) return v;
  return member(json::find(campaign, "parameters"), key);
}

std::optional<std::uint64_t> ended_count(const CampaignInput& in, const char* key) {
  const json::Value* counts = in.ended.is_null() ? nullptr : json::find(in.ended, key);
  if (counts == nullptr || !counts->is_object()) return std::nullopt;
  std::uint64_t n = 0;
  for (const auto& [impl, v] : counts->items()) n += static_cast<std::uint64_t>(read_integer(&v).value_or(0));
  return n;
}

std::uint64_t MergedCampaigns::ended_count(const char* key) const {
  std::uint64_t n = 0;
  for (const CampaignInput& in : inputs) n += report::ended_count(in, key).value_or(0);
  return n;
}

std::size_t MergedCampaigns::skipped_lines() const {
  std::size_t n = 0;
  for (const CampaignInput& i : inputs) n += i.skipped_lines;
  return n;
}

std::size_t MergedCampaigns::duplicates() const {
  std::size_t n = 0;
  for (const CampaignInput& i : inputs) n += i.duplicates;
  return n;
}

MergedCampaigns merge_campaigns(const std::vector<std::string>& dirs) {
  MergedCampaigns merged;
  std::set<RecordKey> seen;
  for (const std::string& dir : dirs) {
    CampaignInput input;
    input.dir = dir;
    input.campaign = read_campaign_json(dir, merged.warnings);
    input.ended = read_end_marker(dir, input.campaign, merged.warnings);
    read_cases(dir, input, seen, merged);
    merged.inputs.push_back(std::move(input));
  }
  warn_about_missing_shards(merged);
  if (merged.records.empty())
    throw std::invalid_argument(
        "no valid record in " + std::to_string(dirs.size()) + (dirs.size() == 1 ? " input" : " inputs") +
        (merged.skipped_lines() == 0
             ? std::string(": every cases.jsonl is empty")
             : ": " + std::to_string(merged.skipped_lines()) + " lines skipped, the first " + merged.first_skip));
  return merged;
}

}  // namespace flashproof::report
