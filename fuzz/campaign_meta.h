// campaign.json (docs/fuzz.md) as a resumed campaign reads it. In its own file, apart from the
// campaign engine, so that the parser fuzzer (tests/parsers/fuzz_campaign_meta.cpp) builds it alone.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "fuzz/campaign.h"

namespace flashproof::fuzz {

// campaign.json's "parameters": what identifies the campaign; a resumed run must match it exactly.
std::string parameters_json(const CampaignSpec& s);

// The same JSON value: same types, texts (numbers compare as written), items and members in order.
bool same_json(const Json& a, const Json& b);

// campaign.json's text (read from `file`), checked to describe the campaign of s: its "parameters"
// are parameters_json(s). Throws std::invalid_argument (one line) when the text is not JSON ("FILE:
// invalid JSON ...") or describes another campaign.
Json check_campaign_json(std::string_view text, const CampaignSpec& s, const std::string& file);

}  // namespace flashproof::fuzz
