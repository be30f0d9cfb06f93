// DIR/ended.json: written when a run ends by itself (every case of the shard ran, or its minutes
// ran out) and removed when a run starts, so a directory without it was killed or is still
// running; `flashproof report` warns about such an input (report/campaign_merge.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "fuzz/campaign_spec.h"

namespace flashproof::fuzz {

// Atomically, so the file is whole or absent. records: all of cases.jsonl's. unsupported and
// fitted: this run's counts per implementation (CampaignResult), written as objects
// {"impl": n}: the pairs with no record (outside the declared support or refused) and the cases
// moved into the declared support, which `flashproof report` shows beside the records.
void write_end_marker(const CampaignSpec& s, std::uint64_t records,
                      const std::map<std::string, std::uint64_t>& unsupported = {},
                      const std::map<std::string, std::uint64_t>& fitted = {});

// The run has not ended: no ended.json (none is fine).
void remove_end_marker(const CampaignSpec& s);

}  // namespace flashproof::fuzz
