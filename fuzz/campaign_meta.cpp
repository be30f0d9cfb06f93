#include "fuzz/campaign_meta.h"

#include <sstream>
#include <stdexcept>

namespace flashproof::fuzz {
namespace {

const char* direction_name(GeneratorSettings::Direction d) {
  return d == GeneratorSettings::Direction::forward ? "forward" : d == GeneratorSettings::Direction::backward ? "backward" : "both";
}

}  // namespace

std::string parameters_json(const CampaignSpec& s) {
  std::ostringstream o;
  o << "{\"seed\": \"" << s.generator.seed << "\", \"impls\": [";
  for (std::size_t i = 0; i < s.impls.size(); ++i) o << (i ? ", " : "") << json_quote(s.impls[i]);
  o << "], \"dtypes\": [";
  for (std::size_t i = 0; i < s.generator.dtypes.size(); ++i) o << (i ? ", " : "") << json_quote(dtype_name(s.generator.dtypes[i]));
  o << "], \"cases\": " << (s.cases ? std::to_string(*s.cases) : "null")
    << ", \"minutes\": " << (s.minutes ? json_number(*s.minutes) : "null")
    << ", \"backward\": " << json_quote(direction_name(s.generator.direction))
    << ", \"max_seqlen\": " << s.generator.max_seqlen << ", \"max_work\": " << s.generator.max_work
    << ", \"shard\": {\"index\": " << s.shard.index << ", \"count\": " << s.shard.count << "}";
  // Written only when not the defaults, so that a default campaign's campaign.json is what it was
  // before profiles existed and its directories still resume.
  if (s.generator.profile != Profile::standard) o << ", \"profile\": " << json_quote(profile_name(s.generator.profile));
  if (const std::int64_t sample = campaign_sample(s); sample != 0) o << ", \"sample\": " << sample;
  o << "}";
  return o.str();
}

std::string campaign_json(const CampaignSpec& s, const std::string& id, const std::string& commit,
                          const std::string& machine, const std::string& started) {
  return "{\n  \"format\": \"flashproof-campaign\",\n  \"version\": 1,\n  \"campaign_id\": " + json_quote(id) +
         ",\n  \"parameters\": " + parameters_json(s) + ",\n  \"commit\": " + json_quote(commit) +
         ",\n  \"machine\": " + json_quote(machine) + ",\n  \"started\": " + json_quote(started) + "\n}\n";
}

bool same_json(const Json& a, const Json& b) {
  if (a.type != b.type || a.boolean != b.boolean || a.text != b.text || a.items.size() != b.items.size() ||
      a.members.size() != b.members.size())
    return false;
  for (std::size_t i = 0; i < a.items.size(); ++i)
    if (!same_json(a.items[i], b.items[i])) return false;
  for (std::size_t i = 0; i < a.members.size(); ++i)
    if (a.members[i].first != b.members[i].first || !same_json(a.members[i].second, b.members[i].second)) return false;
  return true;
}

Json check_campaign_json(std::string_view text, const CampaignSpec& s, const std::string& file) {
  Json existing;
  try {
    existing = parse_json(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(file + ": " + e.what());
  }
  const Json* theirs = existing.find("parameters");
  if (theirs == nullptr || !same_json(*theirs, parse_json(parameters_json(s))))
    throw std::invalid_argument(s.out + " holds another campaign's results (its campaign.json differs in seed, "
                                "implementations, dtypes, budget, limits, shard, profile or sample); use another --out");
  return existing;
}

}  // namespace flashproof::fuzz
