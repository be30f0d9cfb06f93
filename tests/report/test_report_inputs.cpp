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
  // The reason comes with it: how many lines were skipped and why the first was.
  expect_bad_input({dir / "broken", "--out", out.string()},
                   "no valid record in 1 input: 3 lines skipped, the first " + (dir / "broken") +
                       "/cases.jsonl line 1: invalid JSON",
                   out);
}

// A directory name with a line break and an escape sequence reaches the terminal escaped, on one line.
TEST(ReportInputs, WarningsAndErrorsAreOneEscapedLine) {
  TempDir dir;
  const fs::path odd = dir.path() / "odd\n\x1b[2J";
  write_campaign(odd, "", {record_line(standard_record('A'))});
  const CommandResult r = run_report({odd.string(), "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("odd\\n\\x1b[2J/campaign.json: missing"), std::string::npos) << r.err;
}

// A cases.jsonl copied from another campaign: its records name another campaign_id than the
// directory's campaign.json, and are skipped with that reason, never merged.
TEST(ReportInputs, SkipsTheRecordsOfAnotherCampaign) {
  TempDir dir;
  std::string ours = campaign_json("7", 0, 1);
  ours.insert(ours.find('{') + 1, "\"campaign_id\": \"aaaa\", ");
  std::string theirs = record_line(standard_record('A')), mine = record_line(standard_record('B'));
  theirs.insert(theirs.find('{') + 1, "\"campaign_id\": \"bbbb\", ");
  mine.insert(mine.find('{') + 1, "\"campaign_id\": \"aaaa\", ");
  write_campaign(dir.path() / "mixed", ours, {theirs, mine});
  const CommandResult r = run_report({dir / "mixed", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("line 1: skipped: a record of campaign \"bbbb\", not of this directory's \"aaaa\""),
            std::string::npos)
      << r.err;
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "1");
}

// A record whose campaign_id is a number with the id's digits is not the campaign's record.
TEST(ReportInputs, SkipsARecordWhoseIdIsNotAString) {
  TempDir dir;
  std::string ours = campaign_json("7", 0, 1);
  ours.insert(ours.find('{') + 1, "\"campaign_id\": \"12345\", ");
  std::string numeric = record_line(standard_record('A')), mine = record_line(standard_record('B'));
  numeric.insert(numeric.find('{') + 1, "\"campaign_id\": 12345, ");
  mine.insert(mine.find('{') + 1, "\"campaign_id\": \"12345\", ");
  write_campaign(dir.path() / "mixed", ours, {numeric, mine});
  const CommandResult r = run_report({dir / "mixed", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("line 1: skipped: a record of campaign"), std::string::npos) << r.err;
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "1");
}

// Number ids are compared by type and value: 5 is the campaign 5's, 5.0 and 6 are not.
TEST(ReportInputs, KeepsOnlyTheRecordsOfTheSameNumberId) {
  TempDir dir;
  std::string ours = campaign_json("7", 0, 1);
  ours.insert(ours.find('{') + 1, "\"campaign_id\": 5, ");
  std::vector<std::string> lines;
  for (const char* id : {"5", "5.0", "6"}) {
    RecordSpec spec = standard_record('A');
    spec.index = static_cast<long long>(lines.size());
    lines.push_back(record_line(spec));
    lines.back().insert(lines.back().find('{') + 1, "\"campaign_id\": " + std::string(id) + ", ");
  }
  write_campaign(dir.path() / "numbered", ours, lines);
  const CommandResult r = run_report({dir / "numbered", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("line 2: skipped: a record of campaign"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line 3: skipped: a record of campaign \"6\", not of this directory's \"5\""),
            std::string::npos)
      << r.err;
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "1");
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
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "2");
  EXPECT_TRUE(at(items(at(results, {"inputs"}))[0], {"campaign"}).is_null());
}

TEST(ReportInputs, DropsARepeatedLineOfOneInput) {
  TempDir dir;
  const std::string a = record_line(standard_record('A'));
  write_campaign(dir.path() / "resumed", campaign_json("42", 0, 1),
                 {a, record_line(standard_record('B')), a});
  const CommandResult r = run_report({dir / "resumed", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json::Value results = read_results(dir.path() / "out" / "results.json");
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
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "2");
  EXPECT_EQ(text_at(results, {"duplicates"}), "0");
  // Both are listed worst cases: their case files get distinct names.
  const json::Value& worst = at(dtype_of(results, "fp16"), {"worst_cases"});
  ASSERT_EQ(items(worst).size(), 2u);
  EXPECT_EQ(text_at(items(worst)[0], {"campaign_seed"}), "1");
  EXPECT_EQ(text_at(items(worst)[0], {"case_file"}), "cases/fp16-naive-0.json");
  EXPECT_EQ(text_at(items(worst)[1], {"case_file"}), "cases/fp16-naive-0-2.json");
  EXPECT_NE(read_text(dir.path() / "out" / "summary.md").find("case 0 (seed 2)"),
            std::string::npos);
}

// Shards 0 and 2 of a campaign in 3 (say the array task of shard 1 failed): the report warns
// that shard 1/3 is not among its inputs, names it in the results, and still writes the report.
// A campaign whose shards are all given, or that is not sharded, gets no such warning.
TEST(ReportInputs, WarnsAboutTheShardsOfACampaignNotAmongTheInputs) {
  TempDir dir;
  RecordSpec b = standard_record('B');
  b.index = 2;
  write_campaign(dir.path() / "s0", campaign_json("42", 0, 3), {record_line(standard_record('A'))});
  write_campaign(dir.path() / "s2", campaign_json("42", 2, 3), {record_line(b)});
  write_campaign(dir.path() / "other", campaign_json("7", 0, 1), {record_line(standard_record('C'))});
  const CommandResult r = run_report({dir / "s0", dir / "s2", dir / "other", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "flashproof report: warning: campaign seed 42 in 3 shards: 1 not among the inputs (1/3); "
                   "the report covers part of the campaign\n");
  EXPECT_NE(read_text(dir.path() / "out" / "summary.md").find("1 not among the inputs (1/3)"), std::string::npos);
  // A campaign in 2^63 - 1 shards (the largest count fuzz takes): the first eight missing are
  // named, the rest counted, without visiting every index.
  write_campaign(dir.path() / "huge", campaign_json("9", 0, 9223372036854775807), {record_line(standard_record('E'))});
  const CommandResult huge = run_report({dir / "huge", "--out", dir / "out3"});
  ASSERT_EQ(huge.status, 0) << huge.err;
  EXPECT_NE(huge.err.find("campaign seed 9 in 9223372036854775807 shards: 9223372036854775806 not among the inputs "
                          "(1/9223372036854775807, 2/9223372036854775807, 3/"),
            std::string::npos)
      << huge.err;
  EXPECT_NE(huge.err.find("8/9223372036854775807 and 9223372036854775798 more)"), std::string::npos) << huge.err;
  // With every shard given, no warning.
  write_campaign(dir.path() / "s1", campaign_json("42", 1, 3), {record_line(standard_record('D'))});
  const CommandResult all = run_report({dir / "s0", dir / "s1", dir / "s2", "--out", dir / "out2"});
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(all.err, "");
}

// A campaign that was killed has no ended.json: the report says so, in a warning and in the
// inputs table's "ended" column, and results.json's input has "ended": null.
TEST(ReportInputs, WarnsAboutACampaignThatDidNotEnd) {
  TempDir dir;
  write_campaign(dir.path() / "killed", campaign_json("42", 0, 1), {record_line(standard_record('A'))}, "", false);
  const CommandResult r = run_report({dir / "killed", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "flashproof report: warning: " + (dir / "killed") +
                       ": no ended.json: the campaign was killed, is still running, or predates end markers; "
                       "the report holds the cases it had finished\n");
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_TRUE(at(items(at(results, {"inputs"}))[0], {"ended"}).is_null());
  EXPECT_NE(read_text(dir.path() / "out" / "summary.md").find("| 0 | 0 | no |"), std::string::npos);
  // Ended: its time in the column and the marker in results.json.
  write_campaign(dir.path() / "ended", campaign_json("42", 0, 1), {record_line(standard_record('A'))});
  const CommandResult e = run_report({dir / "ended", "--out", dir / "out2"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(e.err, "");
  const json::Value ended = read_results(dir.path() / "out2" / "results.json");
  EXPECT_EQ(text_at(items(at(ended, {"inputs"}))[0], {"ended", "ended"}), "2026-11-21T10:00:00Z");
  EXPECT_NE(read_text(dir.path() / "out2" / "summary.md").find("| 2026-11-21T10:00:00Z |"), std::string::npos);
}

TEST(ReportInputs, KeysByTheRecordsCampaignSeedWithoutCampaignJson) {
  // Two shards of one campaign, neither with campaign.json, one record in both.
  TempDir dir;
  const std::string a = record_line(standard_record('A'));
  write_campaign(dir.path() / "s0", "", {a, record_line(standard_record('B'))});
  write_campaign(dir.path() / "s1", "", {a, record_line(standard_record('C'))});
  const CommandResult r = run_report({dir / "s0", dir / "s1", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "3");
  EXPECT_EQ(text_at(results, {"duplicates"}), "1");
}

TEST(ReportInputs, RewritesAnEarlierReport) {
  TempDir dir;
  write_standard_campaign(dir.path());
  ASSERT_EQ(run_report({dir / "shard1", "--out", dir / "out"}).status, 0);
  ASSERT_EQ(run_report({dir / "shard0", dir / "shard1", "--out", dir / "out"}).status, 0);
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  EXPECT_EQ(text_at(results, {"records"}), "14");
  for (const auto& entry : fs::directory_iterator(dir.path() / "out"))
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace flashproof::report::testing
