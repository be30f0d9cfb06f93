#include "fuzz/campaign_meta.h"

#include <stdexcept>

namespace flashproof::fuzz {
namespace {

const char* direction_name(GeneratorSettings::Direction d) {
  return d == GeneratorSettings::Direction::forward ? "forward" : d == GeneratorSettings::Direction::backward ? "backward" : "both";
}

}  // namespace

json::Value campaign_parameters(const CampaignSpec& s) {
  json::Value p = json::Value::object();
  p["seed"] = std::to_string(s.generator.seed);  // a string: readers that turn numbers into doubles keep it
  p["impls"] = s.impls;
  json::Value& dtypes = p["dtypes"] = json::Value::array();
  for (DType d : s.generator.dtypes) dtypes.push_back(dtype_name(d));
  p["cases"] = s.cases ? json::Value(*s.cases) : json::Value(nullptr);
  p["minutes"] = s.minutes ? json::Value(*s.minutes) : json::Value(nullptr);
  p["backward"] = direction_name(s.generator.direction);
  p["max_seqlen"] = s.generator.max_seqlen;
  p["max_work"] = s.generator.max_work;
  p["shard"] = {{"index", s.shard.index}, {"count", s.shard.count}};
  // Written only when not the defaults, so that a default campaign's campaign.json is what it was
  // before profiles existed and its directories still resume.
  if (s.generator.profile != Profile::standard) p["profile"] = profile_name(s.generator.profile);
  if (const std::int64_t sample = campaign_sample(s); sample != 0) p["sample"] = sample;
  return p;
}

std::string parameters_json(const CampaignSpec& s) { return json::write(campaign_parameters(s)); }

std::string campaign_json(const CampaignSpec& s, const std::string& id, const std::string& commit,
                          const std::string& machine, const std::string& started) {
  const json::Value campaign = {{"format", "flashproof-campaign"}, {"version", 1},       {"campaign_id", id},
                                {"parameters", campaign_parameters(s)}, {"commit", commit}, {"machine", machine},
                                {"started", started}};
  return json::write(campaign, json::top_lines()) + "\n";
}

bool same_json(const json::Value& a, const json::Value& b) {
  // The one-line text with 17 digits tells every difference but an integer's from a float of the
  // same value, and does not depend on which of nlohmann's integer types holds a number.
  return json::write(a) == json::write(b);
}

json::Value check_campaign_json(std::string_view text, const CampaignSpec& s, const std::string& file) {
  json::Value existing = json::parse(text, file);
  const json::Value* theirs = json::find(existing, "parameters");
  if (theirs == nullptr || !same_json(*theirs, campaign_parameters(s)))
    throw std::invalid_argument(s.out + " holds another campaign's results (its campaign.json differs in seed, "
                                "implementations, dtypes, budget, limits, shard, profile or sample); use another --out");
  return existing;
}

}  // namespace flashproof::fuzz
