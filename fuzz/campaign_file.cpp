#include "fuzz/campaign_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "fuzz/campaign_meta.h"
#include "fuzz/results_log.h"
#include "fuzz/run_provenance.h"

namespace flashproof::fuzz {
namespace fs = std::filesystem;
namespace {

fs::path campaign_file(const CampaignSpec& s) { return fs::path(s.out) / "campaign.json"; }

// A fresh campaign's id: random, so that records of two directories run with the same parameters
// still tell their campaign apart.
std::string new_campaign_id() {
  std::random_device random;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", random(), random());
  return buf;
}

}  // namespace

CampaignIdentity read_campaign_identity(const CampaignSpec& s) {
  const fs::path file = campaign_file(s);
  if (!fs::exists(file)) return {std::nullopt, new_campaign_id()};
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  CampaignIdentity identity{check_campaign_json(text.str(), s, file.string()), {}};
  const json::Value* known = json::find(*identity.existing, "campaign_id");
  if (known && !known->is_string())
    throw std::invalid_argument(s.out + "/campaign.json: campaign_id is not a string; use another --out");
  identity.id = known ? known->get<std::string>() : new_campaign_id();
  return identity;
}

void write_campaign_identity(const CampaignSpec& s, const CampaignIdentity& identity) {
  const std::string file = campaign_file(s).string();
  if (!identity.existing) {
    write_file_atomically(file, campaign_json(s, identity.id, source_commit(), machine_description(), utc_now()));
  } else if (!json::find(*identity.existing, "campaign_id")) {  // its records were checked by their cases
    json::Value with_id = *identity.existing;
    with_id["campaign_id"] = identity.id;  // appended: the members before keep their order
    write_file_atomically(file, json::write(with_id, json::indented()) + "\n");
  }
}

}  // namespace flashproof::fuzz
