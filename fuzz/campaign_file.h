// DIR/campaign.json, the campaign's identity across runs: found and checked to describe this
// campaign when the directory holds one, written (atomically) when it does not, and given a
// campaign_id when a version without ids wrote it.
#pragma once

#include <optional>
#include <string>

#include "core/json.h"
#include "fuzz/campaign_spec.h"

namespace flashproof::fuzz {

struct CampaignIdentity {
  std::optional<json::Value> existing;  // the directory's campaign.json; nullopt for a new campaign
  std::string id;                // its campaign_id, or a new random one
};

// Throws std::invalid_argument (one line) when campaign.json is not JSON, describes another
// campaign or has a campaign_id that is not a string.
CampaignIdentity read_campaign_identity(const CampaignSpec& s);

// Writes campaign.json for a new campaign, or adds the id to one without; leaves one with an id as
// it is. Called once the records of cases.jsonl are known to be this campaign's, so that a refused
// directory is left as it was.
void write_campaign_identity(const CampaignSpec& s, const CampaignIdentity& identity);

}  // namespace flashproof::fuzz
