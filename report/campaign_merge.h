// Reading campaign directories (docs/fuzz.md) and merging them into one set of records: shards of
// one campaign, several campaigns, or a campaign and its resumed run.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <cstdint>
#include <optional>

#include "core/json.h"
#include "report/fuzz_record.h"

namespace flashproof::report {

struct CampaignInput {
  std::string dir;
  json::Value campaign;           // campaign.json; null when missing or unreadable
  // ended.json, which a campaign writes when it ends by itself; null when absent (killed or still
  // running) or unreadable.
  json::Value ended;
  std::size_t records = 0;        // records kept from this input
  std::size_t skipped_lines = 0;  // lines that are not a valid record (e.g. a truncated last one)
  std::size_t duplicates = 0;     // records whose key an earlier line or input already had
};

struct MergedCampaigns {
  std::vector<CampaignInput> inputs;
  std::vector<FuzzRecord> records;    // in reading order, each key once
  std::vector<std::string> warnings;  // one line each, e.g. a missing campaign.json
  std::string first_skip;             // "PATH line N: why" of the first line skipped, for the error

  std::size_t skipped_lines() const;
  std::size_t duplicates() const;
  // Over the inputs' ended.json (absent: 0): the (case, implementation) pairs with no record
  // because the implementation does not run the case ("unsupported": outside its declared support,
  // or refused when it ran) and the cases fitted into a declared support ("fitted").
  std::uint64_t ended_count(const char* key) const;
};

// One input's ended.json count (the sum over implementations of its object `key`); nullopt where
// ended.json does not say (absent, or written before the count).
std::optional<std::uint64_t> ended_count(const CampaignInput& in, const char* key);

// Reads DIR/campaign.json and DIR/cases.jsonl of each dir. A record's key is (campaign seed,
// index, impl, the case's own seed); the first record of a key is kept, later ones are counted
// as duplicates. The campaign seed is the record's campaign_seed, else campaign.json's seed; the
// case's seed is in the key too, so that records whose campaign seed is unknown do not merge
// different campaigns. Warns about an input with a campaign.json but no ended.json (it holds only
// the cases it had finished) and about the shards of a campaign that are not among the inputs
// (same seed and shard count in campaign.json). Throws std::invalid_argument (one line) when a
// dir has no readable cases.jsonl or no input holds a valid record.
MergedCampaigns merge_campaigns(const std::vector<std::string>& dirs);

// A campaign parameter of campaign.json ("seed", "shard", ...): a top-level member, or one of its
// "parameters" object; nullptr when absent.
const json::Value* campaign_parameter(const json::Value& campaign, std::string_view key);

}  // namespace flashproof::report
