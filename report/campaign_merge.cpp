#include "report/campaign_merge.h"

#include <filesystem>
#include <fstream>
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

Json read_campaign_json(const fs::path& dir, std::vector<std::string>& warnings) {
  const fs::path path = dir / "campaign.json";
  std::ifstream in(path);
  if (!in) {
    warnings.push_back(path.string() + ": missing; going on without the campaign's parameters");
    return Json{};
  }
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return parse_json(text.str());
  } catch (const std::invalid_argument& e) {
    warnings.push_back(path.string() + ": " + e.what() + "; ignored");
    return Json{};
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
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      FuzzRecord r = fuzz_record_from_json(parse_json(line));
      r.source = input.dir;
      if (r.campaign_seed.empty()) r.campaign_seed = seed;
      if (!seen.insert({r.campaign_seed, r.index, r.impl, r.case_seed}).second) {
        ++input.duplicates;
        continue;
      }
      ++input.records;
      merged.records.push_back(std::move(r));
    } catch (const std::invalid_argument& e) {
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

const Json* campaign_parameter(const Json& campaign, std::string_view key) {
  if (const Json* v = campaign.find(key)) return v;
  const Json* parameters = campaign.find("parameters");
  return parameters != nullptr ? parameters->find(key) : nullptr;
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
    read_cases(dir, input, seen, merged);
    merged.inputs.push_back(std::move(input));
  }
  if (merged.records.empty())
    throw std::invalid_argument("no valid record in " + std::to_string(dirs.size()) +
                                (dirs.size() == 1 ? " input" : " inputs"));
  return merged;
}

}  // namespace flashproof::report
