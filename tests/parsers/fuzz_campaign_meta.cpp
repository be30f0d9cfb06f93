// libFuzzer target: campaign.json as both its readers take it. A resumed campaign
// (fuzz::check_campaign_json: JSON, then "parameters" equal to the campaign's own) must refuse bad
// text with a one-line std::invalid_argument. `flashproof report` (report::merge_campaigns over a
// scratch directory: the input as campaign.json beside a cases.jsonl of two records of valid.json's
// campaign, and a second input without records, shard 1/4 of seed "3") takes the seed, the shard
// and the campaign_id from it, warns about what it cannot use and goes on; it may throw only the
// one-line std::invalid_argument of "no valid record" (the input's campaign_id disowns the records).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "fuzz/campaign_meta.h"
#include "report/campaign_merge.h"

namespace {

namespace fs = std::filesystem;

void one_line(const std::invalid_argument& e) {
  if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
}

// The campaign of tests/parsers/corpus/campaign_meta/valid.json.
flashproof::fuzz::CampaignSpec spec() {
  flashproof::fuzz::CampaignSpec s;
  s.generator.seed = 3;
  s.impls = {"naive"};
  s.cases = 3;
  s.out = "fuzz-campaign";
  return s;
}

void write(const fs::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) __builtin_trap();  // the scratch directory must be writable
}

// DIR/fuzzed (the input's campaign.json) and DIR/other, made once and removed at exit.
struct Scratch {
  fs::path root;
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "fuzz_campaign_meta.XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) __builtin_trap();
    root = pattern;
    // Records of the campaign of valid.json, naming its campaign_id; the other input holds none.
    for (const char* dir : {"fuzzed", "other"}) fs::create_directory(root / dir);
    write(root / "fuzzed" / "cases.jsonl",
          R"({"format": "flashproof-fuzz-record", "version": 1, "campaign_id": "c9816fcadc3a3587", "index": 0, "impl": "naive", "where": "host", "status": "crash", "error": "killed by signal 9", "case": {"dtype": "fp16", "seed": "11"}})"
          "\n"
          R"({"format": "flashproof-fuzz-record", "version": 1, "campaign_id": "c9816fcadc3a3587", "index": 1, "impl": "naive", "where": "host", "status": "crash", "error": "timeout", "case": {"dtype": "bf16", "seed": "12"}})"
          "\n");
    write(root / "other" / "cases.jsonl", "");
    write(root / "other" / "campaign.json",
          R"({"format": "flashproof-campaign", "version": 1, "parameters": {"seed": "3", "shard": {"index": 1, "count": 4}}})");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const flashproof::fuzz::CampaignSpec campaign = spec();
  static const Scratch scratch;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // A resumed campaign.
  try {
    const flashproof::json::Value j = flashproof::fuzz::check_campaign_json(text, campaign, "fuzz/campaign.json");
    // What it accepts it accepts written back too (the campaign rewrites it when adding an id).
    (void)flashproof::fuzz::check_campaign_json(flashproof::json::write(j, flashproof::json::indented()), campaign,
                                                "again");
  } catch (const std::invalid_argument& e) {
    one_line(e);
  }

  // The report. Text that is not JSON it ignores with json::parse's message (fuzz_json's part, and the
  // resumed campaign's above); the files cost, so only JSON goes on.
  try {
    (void)flashproof::json::parse(text);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  write(scratch.root / "fuzzed" / "campaign.json", text);
  try {
    const flashproof::report::MergedCampaigns m =
        flashproof::report::merge_campaigns({(scratch.root / "fuzzed").string(), (scratch.root / "other").string()});
    if (m.records.empty()) __builtin_trap();
  } catch (const std::invalid_argument& e) {
    one_line(e);
  }
  return 0;
}
