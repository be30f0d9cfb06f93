// `report`'s handling of its inputs: bad arguments and directories (exit 2, one line), missing
// campaign.json (warn, go on), duplicates within and across inputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

namespace fs = std::filesystem;

// Exit 2, one line "flashproof report: ..." holding `says`, nothing on out, no report written.
void expect_bad_input(const std::vector<std::string>& args, const std::string& says,
                      const fs::path& out) {
  const CommandResult r = run_report(args);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("flashproof report: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "index.html"));
}

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override { write_standard_campaign(dir.path()); }
  TempDir dir;
  const fs::path out = dir.path() / "out";
};

TEST_F(BadInput, MissingOut) { expect_bad_input({dir / "shard0"}, "missing --out DIR", out); }

TEST_F(BadInput, OutWithoutDirectory) {
  expect_bad_input({dir / "shard0", "--out"}, "--out needs a directory", out);
}

TEST_F(BadInput, OutGivenTwice) {
  expect_bad_input({dir / "shard0", "--out", out.string(), "--out=" + (dir / "o2")},
                   "--out given twice", out);
}

TEST_F(BadInput, UnknownOption) {
  expect_bad_input({dir / "shard0", "--out", out.string(), "--colour"}, "unknown option --colour",
                   out);
}

TEST_F(BadInput, NoCampaignDirectory) {
  expect_bad_input({"--out", out.string()}, "no campaign directory given", out);
}

TEST_F(BadInput, DirectoryWithoutCasesFile) {
  fs::create_directories(dir.path() / "empty");
  expect_bad_input({dir / "shard0", dir / "empty", "--out", out.string()},
                   "empty/cases.jsonl does not exist", out);
  EXPECT_FALSE(fs::exists(out));  // nothing written before the inputs are read
}

TEST_F(BadInput, NoValidRecordInAnyInput) {
  const std::string line = record_line(standard_record('A'));
  write_campaign(dir.path() / "broken", campaign_json("7", 0, 1),
                 {"not json", "{\"format\": \"something-else\"}"}, line.substr(0, 40));
  expect_bad_input({dir / "broken", "--out", out.string()}, "no valid record in 1 input", out);
}

TEST_F(BadInput, OutThatCannotBeCreated) {
  write_text(dir.path() / "a-file", "x");
  const fs::path under_file = dir.path() / "a-file" / "out";
  expect_bad_input({dir / "shard0", "--out", under_file.string()}, "cannot create", under_file);
}

TEST(ReportInputs, HelpPrintsUsage) {
  const CommandResult r = run_report({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: flashproof report DIR... --out DIR\n", 0), 0u);
}

TEST(ReportInputs, WarnsWithoutCampaignJsonAndGoesOn) {
  TempDir dir;
  write_campaign(dir.path() / "bare", "",
                 {record_line(standard_record('A')), record_line(standard_record('B'))});
  const CommandResult r = run_report({dir / "bare", "--out=" + (dir / "out")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "flashproof report: warning: " + (dir / "bare") +
                       "/campaign.json: missing; going on without the campaign's parameters\n");
  const Json results = parse_json(read_text(dir.path() / "out" / "results.json"));
  EXPECT_EQ(text_at(results, {"records"}), "2");
  EXPECT_EQ(at(results, {"inputs"}).items[0].find("campaign")->type, Json::Type::null);
}

TEST(ReportInputs, DropsARepeatedLineOfOneInput) {
  TempDir dir;
  const std::string a = record_line(standard_record('A'));
  write_campaign(dir.path() / "resumed", campaign_json("42", 0, 1),
                 {a, record_line(standard_record('B')), a});
  const CommandResult r = run_report({dir / "resumed", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json results = parse_json(read_text(dir.path() / "out" / "results.json"));
  EXPECT_EQ(text_at(results, {"records"}), "2");
  EXPECT_EQ(text_at(results, {"duplicates"}), "1");
}

TEST(ReportInputs, KeepsTheSameIndexOfTwoCampaigns) {
  // Records without campaign_seed (docs/fuzz.md's shape): the seed is campaign.json's.
  TempDir dir;
  RecordSpec spec = standard_record('A');
  spec.campaign_seed = "";
  const std::string a = record_line(spec);
  write_campaign(dir.path() / "one", campaign_json("1", 0, 1, true), {a});
  write_campaign(dir.path() / "two", campaign_json("2", 0, 1, true), {a});
  const CommandResult r = run_report({dir / "one", dir / "two", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json results = parse_json(read_text(dir.path() / "out" / "results.json"));
  EXPECT_EQ(text_at(results, {"records"}), "2");
  EXPECT_EQ(text_at(results, {"duplicates"}), "0");
  // Both are listed worst cases: their case files get distinct names.
  const Json& worst = at(dtype_of(results, "fp16"), {"worst_cases"});
  ASSERT_EQ(worst.items.size(), 2u);
  EXPECT_EQ(text_at(worst.items[0], {"campaign_seed"}), "1");
  EXPECT_EQ(text_at(worst.items[0], {"case_file"}), "cases/fp16-naive-0.json");
  EXPECT_EQ(text_at(worst.items[1], {"case_file"}), "cases/fp16-naive-0-2.json");
  EXPECT_NE(read_text(dir.path() / "out" / "summary.md").find("case 0 (seed 2)"),
            std::string::npos);
}

TEST(ReportInputs, KeysByTheRecordsCampaignSeedWithoutCampaignJson) {
  // Two shards of one campaign, neither with campaign.json, one record in both.
  TempDir dir;
  const std::string a = record_line(standard_record('A'));
  write_campaign(dir.path() / "s0", "", {a, record_line(standard_record('B'))});
  write_campaign(dir.path() / "s1", "", {a, record_line(standard_record('C'))});
  const CommandResult r = run_report({dir / "s0", dir / "s1", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json results = parse_json(read_text(dir.path() / "out" / "results.json"));
  EXPECT_EQ(text_at(results, {"records"}), "3");
  EXPECT_EQ(text_at(results, {"duplicates"}), "1");
}

TEST(ReportInputs, RewritesAnEarlierReport) {
  TempDir dir;
  write_standard_campaign(dir.path());
  ASSERT_EQ(run_report({dir / "shard1", "--out", dir / "out"}).status, 0);
  ASSERT_EQ(run_report({dir / "shard0", dir / "shard1", "--out", dir / "out"}).status, 0);
  const Json results = parse_json(read_text(dir.path() / "out" / "results.json"));
  EXPECT_EQ(text_at(results, {"records"}), "14");
  for (const auto& entry : fs::directory_iterator(dir.path() / "out"))
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace flashproof::report::testing
