// Where and when a campaign ran, for campaign.json and ended.json: the source's git commit, the
// machine, the UTC time. Informative only: no reader compares them.
#pragma once

#include <string>

namespace flashproof::fuzz {

// `git rev-parse --short HEAD` of the source tree this binary was built from; "unknown" outside git.
std::string source_commit();

// "HOST, N hardware threads".
std::string machine_description();

// Now, as 2024-01-31T12:00:00Z.
std::string utc_now();

}  // namespace flashproof::fuzz
