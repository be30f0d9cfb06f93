#include "fuzz/end_marker.h"

#include <filesystem>
#include <string>

#include "core/json.h"
#include "fuzz/results_log.h"
#include "fuzz/run_provenance.h"

namespace flashproof::fuzz {
namespace fs = std::filesystem;

void write_end_marker(const CampaignSpec& s, std::uint64_t records, const std::map<std::string, std::uint64_t>& unsupported,
                      const std::map<std::string, std::uint64_t>& fitted) {
  const json::Value ended = {{"format", "flashproof-campaign-end"},
                             {"version", 1},
                             {"ended", utc_now()},
                             {"records", records},
                             {"why", s.cases ? "every case of the shard ran" : "the --minutes ran out"},
                             {"unsupported", unsupported},
                             {"fitted", fitted}};
  write_file_atomically((fs::path(s.out) / "ended.json").string(), json::write(ended) + "\n");
}

void remove_end_marker(const CampaignSpec& s) {
  std::error_code ec;
  fs::remove(fs::path(s.out) / "ended.json", ec);
}

}  // namespace flashproof::fuzz
