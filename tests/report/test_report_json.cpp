// The report's JSON: what it takes from a record (fuzz_record_from_json), and how it writes
// results.json (its own numbers shortest, the campaign's files as the campaign wrote them, counts
// as integers) and the worst cases' case files (byte for byte as the case-file writer did).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "report/campaign_merge.h"
#include "report/fuzz_record.h"
#include "report/report_model.h"
#include "report/results_json.h"
#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::invalid_argument("no " + from + " in " + text);
  return text.replace(at, from.size(), to);
}

// The text without its line breaks, as a record embeds a case file.
std::string unbroken(const std::string& text) {
  std::string line;
  for (char c : text)
    if (c != '\n') line += c;
  return line;
}

FuzzRecord record_from(const std::string& line) { return fuzz_record_from_json(json::parse(line)); }

void expect_refused(const std::string& line, const std::string& why) {
  try {
    (void)record_from(line);
    ADD_FAILURE() << "accepted: " << line;
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), why);
  }
}

TEST(FuzzRecordJson, TakesAnIndexOnlyAsAnIntegerNumber) {
  const std::string a = record_line(standard_record('A'));
  EXPECT_EQ(record_from(replaced(a, "\"index\": 0", "\"index\": 9223372036854775807")).index, 9223372036854775807);
  for (const char* index : {"1.0", "1e0", "\"1\"", "-1", "9223372036854775808", "null"})
    expect_refused(replaced(a, "\"index\": 0", std::string("\"index\": ") + index),
                   "\"index\" must be an integer >= 0");
  expect_refused(replaced(a, "\"index\": 0, ", ""), "\"index\" must be an integer >= 0");
  // The version as the report has always read it: 1, or "1"; not 1.0.
  EXPECT_EQ(record_from(replaced(a, "\"version\": 1", "\"version\": \"1\"")).impl, "naive");
  for (const char* version : {"1.0", "2", "\"1.0\""})
    expect_refused(replaced(a, "\"version\": 1", std::string("\"version\": ") + version),
                   "unsupported fuzz record version (this report reads version 1)");
}

TEST(FuzzRecordJson, ReadsSeedsAsTheirExactText) {
  const std::string a = record_line(standard_record('A'));
  EXPECT_EQ(record_from(a).case_seed, "1000");  // the case file's string
  // A number seed is its integer, not that integer through a double (18446744073709551616).
  const FuzzRecord big = record_from(replaced(a, "\"seed\": \"1000\"", "\"seed\": 18446744073709551615"));
  EXPECT_EQ(big.case_seed, "18446744073709551615");
  // Without a case file, the check record's case: its seed is a number.
  const FuzzRecord no_case = record_from(replaced(a, "\"case\": {", "\"not_the_case\": {"));
  EXPECT_EQ(no_case.case_seed, "1000");
  EXPECT_TRUE(no_case.case_file.is_null());
  EXPECT_EQ(record_from(replaced(a, "\"campaign_seed\": \"42\"", "\"campaign_seed\": 42")).campaign_seed, "42");
  EXPECT_EQ(record_from(replaced(a, "\"campaign_seed\": \"42\"", "\"campaign_seed\": true")).campaign_seed, "");
}

TEST(FuzzRecordJson, ReadsShapesAsIntegersAndNonFiniteNumbersAsStrings) {
  RecordSpec spec = standard_record('A');
  spec.logit_scale = -kInf;
  spec.tensors[0].max_ulps = kInf;
  const std::string a = record_line(spec);
  const FuzzRecord r = record_from(replaced(a, "\"head_dim\": 16,", "\"head_dim\": \"32\","));
  EXPECT_EQ(r.seqlen_k, 20);
  EXPECT_EQ(r.head_dim, 32);  // a string holding an integer, as the report has always read it
  EXPECT_EQ(r.logit_scale, -kInf);
  ASSERT_EQ(r.tensors.size(), 2u);
  EXPECT_EQ(r.tensors[0].max_ulps, kInf);
  EXPECT_EQ(record_from(replaced(a, "\"seqlen_k\": 20,", "\"seqlen_k\": 20.5,")).seqlen_k, -1);
  EXPECT_EQ(record_from(replaced(a, "\"seqlen_k\": 20,", "\"seqlen_k\": 2e1,")).seqlen_k, -1);
}

// A worst case's case file holds the record's case object as the case-file writer wrote it:
// %.17g numbers, integers beyond a double's 53 bits, escapes, empty and nested containers.
TEST(CaseFileBytes, AreTheRecordsCaseObjectWrittenBack) {
  const RecordSpec h = standard_record('H');
  const std::string case_text =
      replaced(replaced(case_object_text(h), "\"seed\": \"1005\"",
                        "\"seed\": 18446744073709551615,\n  \"extra\": [\n    0.10000000000000001,\n    -0,\n"
                        "    -2.0994975127877456e-15,\n    -9223372036854775808,\n    {},\n    [],\n    {\n"
                        "      \"a\": [\n        true,\n        null\n      ]\n    }\n  ]"),
               "\"note\": \"\"", "\"note\": \"caf\u00e9 \\\"q\\\" \\\\ \\t \\u0001\"");
  const std::string line = replaced(record_line(h), unbroken(case_object_text(h)), unbroken(case_text));
  EXPECT_EQ(json::write(json::parse(case_text), json::indented(json::Digits::g17)), case_text);

  TempDir dir;
  write_campaign(dir.path() / "c", campaign_json("42", 0, 1), {line});
  const CommandResult r = run_report({dir / "c", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_text(dir.path() / "out" / "cases" / "fp16-fa2-5.json"), case_text + "\n");
}

// results.json writes the report's own numbers as their shortest round-trip text (0.1), and each
// input's campaign.json and ended.json with the campaign's %.17g (0.10000000000000001).
TEST(ResultsJsonBytes, WritesItsNumbersShortestAndTheCampaignsFilesAsWritten) {
  TempDir dir;
  RecordSpec a = standard_record('A');
  a.tensors[0].max_rel = 0.1;
  std::string campaign = campaign_json("42", 0, 1);
  campaign = replaced(campaign, "\"cases\": 8", "\"cases\": 8, \"rate\": 0.10000000000000001, \"small\": "
                                                "1.0000000000000001e-05, \"u64\": 18446744073709551615, \"neg\": -0");
  write_campaign(dir.path() / "c", campaign, {record_line(a)});
  write_text(dir.path() / "c" / "ended.json",
             "{\"format\": \"flashproof-campaign-end\", \"version\": 1, \"ended\": \"2026-11-21T10:00:00Z\", "
             "\"seconds\": 12.345000000000001}\n");
  const CommandResult r = run_report({dir / "c", "--out", dir / "out"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json::Value results = read_results(dir.path() / "out" / "results.json");
  const std::string text = read_text(dir.path() / "out" / "results.json");
  const std::string in_parameters = ",\n" + std::string(10, ' ');
  EXPECT_NE(text.find(in_parameters + "\"rate\": 0.10000000000000001" + in_parameters +
                      "\"small\": 1.0000000000000001e-05" + in_parameters + "\"u64\": 18446744073709551615" +
                      in_parameters + "\"neg\": -0,"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(",\n        \"seconds\": 12.345000000000001\n      },\n"), std::string::npos) << text;
  const std::string in_max_rel = "\n" + std::string(16, ' ');
  EXPECT_NE(text.find("\"max_rel\": {" + in_max_rel + "\"cases\": 1," + in_max_rel + "\"max\": 0.1," + in_max_rel +
                      "\"p50\": 0.1,"),
            std::string::npos)
      << text;
  EXPECT_EQ(number_at(tensor_of(results, "fp16", "naive", "O"), {"max_rel", "max"}), 0.1);
}

// Every count in results.json is a JSON integer, never a double that happens to be whole.
void expect_integer_counts(const json::Value& v, const std::string& path) {
  static const char* const kCounts[] = {"version", "records", "skipped_lines", "duplicates", "cases", "pass",
                                        "fail", "out-of-domain", "not-judged", "crash", "not_in_domain",
                                        "regression", "unbounded", "skipped", "index"};
  if (v.is_array())
    for (std::size_t k = 0; k < v.size(); ++k) expect_integer_counts(v[k], path + "[" + std::to_string(k) + "]");
  if (!v.is_object()) return;
  for (const auto& [key, value] : v.items()) {
    if (key == "campaign" || key == "ended") continue;  // the campaign's files, as they are
    if (std::find(std::begin(kCounts), std::end(kCounts), key) != std::end(kCounts)) {
      EXPECT_TRUE(value.is_number_integer()) << path << "." << key << " = " << json::write(value);
    }
    expect_integer_counts(value, path + "." + key);
  }
}

TEST(ResultsJsonBytes, CountsAreIntegers) {
  TempDir dir;
  write_standard_campaign(dir.path());
  const Report report = build_report(
      merge_campaigns({(dir.path() / "shard0").string(), (dir.path() / "shard1").string()}), dir / "out");
  const json::Value results = results_json(report);
  expect_integer_counts(results, "results");
  EXPECT_TRUE(at(results, {"records"}).is_number_integer());
  EXPECT_EQ(json::write(at(results, {"records"})), "14");
}

}  // namespace
}  // namespace flashproof::report::testing
