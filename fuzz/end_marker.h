// DIR/ended.json: written when a run ends by itself (every case of the shard ran, or its minutes
// ran out) and removed when a run starts, so a directory without it was killed or is still
// running; `flashproof report` warns about such an input (report/campaign_merge.cpp).
#pragma once

#include <cstdint>

#include "fuzz/campaign_spec.h"

namespace flashproof::fuzz {

// Atomically, so the file is whole or absent. records: all of cases.jsonl's.
void write_end_marker(const CampaignSpec& s, std::uint64_t records);

// The run has not ended: no ended.json (none is fine).
void remove_end_marker(const CampaignSpec& s);

}  // namespace flashproof::fuzz
