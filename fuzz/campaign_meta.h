// campaign.json's text (docs/fuzz.md): as a new campaign writes it and a resumed campaign reads it.
// In its own file, apart from the campaign engine and its files, so that the parser fuzzer
// (tests/parsers/fuzz_campaign_meta.cpp) builds it alone.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "fuzz/campaign_spec.h"

namespace flashproof::fuzz {

// campaign.json's "parameters": what identifies the campaign; a resumed run must match it exactly.
json::Value campaign_parameters(const CampaignSpec& s);
// The same, as its one line of campaign.json.
std::string parameters_json(const CampaignSpec& s);

// campaign.json's text for a new campaign: format, version, id, campaign_parameters(s), and where
// and when it started (run_provenance.h), which no reader compares.
std::string campaign_json(const CampaignSpec& s, const std::string& id, const std::string& commit,
                          const std::string& machine, const std::string& started);

// The same JSON value: same kinds of value, strings, numbers (an integer and a float of the same
// value are the same number), items and members in order.
bool same_json(const json::Value& a, const json::Value& b);

// campaign.json's text (read from `file`), checked to describe the campaign of s: its "parameters"
// are campaign_parameters(s). Throws std::invalid_argument (one line) when the text is not JSON
// ("FILE: invalid JSON ...") or describes another campaign.
json::Value check_campaign_json(std::string_view text, const CampaignSpec& s, const std::string& file);

}  // namespace flashproof::fuzz
