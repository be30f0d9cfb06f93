// `report` on the standard fixture (campaign_fixture.cpp): what results.json, summary.md,
// index.html and cases/ hold, and what is printed.
#include <gtest/gtest.h>

#include <filesystem>

#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(StandardReport, PrintsWhereTheReportIsAndOneSummaryLine) {
  EXPECT_EQ(run.out,
            "report: " + (dir / "out") +
                "/index.html\n"
                "14 records from 2 inputs (1 duplicate dropped, 1 unparsable line skipped): "
                "9 pass, 2 fail (0 non-finite), 2 out-of-domain, 0 not judged, 1 crash; largest finite "
                "error/bound inf (fp16 fa2 case 6 O)\n");
  // The truncated last line of shard0 is reported as a warning, on err.
  EXPECT_NE(run.err.find("shard0/cases.jsonl line 7: skipped: invalid JSON"), std::string::npos)
      << run.err;
  // So is shard0's missing end marker: it was killed, and holds only what it had finished.
  EXPECT_NE(run.err.find("shard0: no ended.json: the campaign was killed"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("shard1: no ended.json"), std::string::npos) << run.err;
  for (const char* file : {"index.html", "summary.md", "results.json"})
    EXPECT_TRUE(fs::is_regular_file(dir.path() / "out" / file)) << file;
}

TEST_F(StandardReport, MergesShardsCountingDuplicatesAndSkippedLines) {
  EXPECT_EQ(text_at(results, {"format"}), "flashproof-report");
  EXPECT_EQ(text_at(results, {"records"}), "14");
  EXPECT_EQ(text_at(results, {"duplicates"}), "1");
  EXPECT_EQ(text_at(results, {"skipped_lines"}), "1");
  const json::Value& inputs = at(results, {"inputs"});
  ASSERT_EQ(items(inputs).size(), 2u);
  EXPECT_EQ(text_at(items(inputs)[0], {"records"}), "6");
  EXPECT_EQ(text_at(items(inputs)[0], {"skipped_lines"}), "1");
  EXPECT_EQ(text_at(items(inputs)[0], {"duplicates"}), "0");
  EXPECT_EQ(text_at(items(inputs)[1], {"records"}), "8");
  EXPECT_EQ(text_at(items(inputs)[1], {"duplicates"}), "1");
  EXPECT_EQ(text_at(items(inputs)[1], {"campaign", "parameters", "seed"}), "42");
}

TEST_F(StandardReport, CountsVerdictsPerDtypeAndImplementation) {
  EXPECT_EQ(text_at(dtype_of(results, "fp16"), {"records"}), "10");
  EXPECT_EQ(text_at(dtype_of(results, "bf16"), {"records"}), "4");
  const json::Value& naive = impl_of(results, "fp16", "naive");
  EXPECT_EQ(text_at(naive, {"cases"}), "5");
  EXPECT_EQ(text_at(naive, {"status", "pass"}), "4");
  EXPECT_EQ(text_at(naive, {"status", "fail"}), "0");
  EXPECT_EQ(text_at(naive, {"status", "out-of-domain"}), "1");
  EXPECT_EQ(text_at(naive, {"status", "crash"}), "0");
  EXPECT_EQ(text_at(naive, {"not_in_domain"}), "1");
  const json::Value& fa2 = impl_of(results, "fp16", "fa2");
  EXPECT_EQ(text_at(fa2, {"cases"}), "5");
  EXPECT_EQ(text_at(fa2, {"status", "pass"}), "1");
  EXPECT_EQ(text_at(fa2, {"status", "fail"}), "2");
  EXPECT_EQ(text_at(fa2, {"status", "out-of-domain"}), "1");
  EXPECT_EQ(text_at(fa2, {"status", "crash"}), "1");
  EXPECT_EQ(text_at(fa2, {"not_in_domain"}), "2");  // the out-of-domain case and a fail (H)
  EXPECT_EQ(text_at(impl_of(results, "bf16", "fa2"), {"status", "pass"}), "2");

  const json::Value& o = tensor_of(results, "fp16", "fa2", "O");
  EXPECT_EQ(text_at(o, {"cases"}), "4");  // the crash has no tensors
  EXPECT_EQ(text_at(o, {"verdicts", "pass"}), "1");
  EXPECT_EQ(text_at(o, {"verdicts", "fail"}), "2");
  EXPECT_EQ(text_at(o, {"verdicts", "out-of-domain"}), "1");
  EXPECT_EQ(text_at(o, {"regression"}), "1");  // case H
  EXPECT_EQ(text_at(tensor_of(results, "fp16", "naive", "O"), {"regression"}), "0");
  EXPECT_EQ(text_at(tensor_of(results, "fp16", "fa2", "dQ"), {"cases"}), "1");
}

TEST_F(StandardReport, ErrorPercentilesAreOverCasesOfEachCasesLargestError) {
  // fp16 naive O over its judged cases A, C, G, N: ULPs 2, 0, 3, 1 (E is out of the domain).
  const json::Value& naive_o = tensor_of(results, "fp16", "naive", "O");
  EXPECT_EQ(text_at(naive_o, {"max_ulps", "cases"}), "4");
  EXPECT_EQ(text_at(naive_o, {"max_ulps", "max"}), "3");
  EXPECT_EQ(text_at(naive_o, {"max_ulps", "p50"}), "1");  // nearest rank: 2nd of 4
  EXPECT_EQ(text_at(naive_o, {"max_ulps", "p99"}), "3");
  EXPECT_EQ(number_at(naive_o, {"max_rel", "max"}), 1.5e-3);
  EXPECT_EQ(number_at(naive_o, {"max_rel", "p50"}), 5e-4);
  EXPECT_EQ(number_at(naive_o, {"max_rel", "p99"}), 1.5e-3);
  // fp16 fa2 O over B, H, I: ULPs 4, 8, inf; relative 2e-3, 4e-3, inf.
  const json::Value& fa2_o = tensor_of(results, "fp16", "fa2", "O");
  EXPECT_EQ(text_at(fa2_o, {"max_ulps", "cases"}), "3");
  EXPECT_EQ(text_at(fa2_o, {"max_ulps", "max"}), "inf");
  EXPECT_EQ(text_at(fa2_o, {"max_ulps", "p50"}), "8");
  EXPECT_EQ(text_at(fa2_o, {"max_ulps", "p99"}), "inf");
  EXPECT_EQ(number_at(fa2_o, {"max_rel", "p50"}), 4e-3);
  EXPECT_EQ(text_at(fa2_o, {"max_rel", "max"}), "inf");
  EXPECT_EQ(text_at(tensor_of(results, "fp16", "fa2", "dQ"), {"max_ulps", "max"}), "300");
  EXPECT_EQ(text_at(tensor_of(results, "bf16", "fa2", "O"), {"max_ulps", "p50"}), "2");
}

TEST_F(StandardReport, HistogramsErrorOverBound) {
  const json::Value& naive = at(tensor_of(results, "fp16", "naive", "O"), {"error_over_bound"});
  EXPECT_EQ(text_at(naive, {"cases"}), "4");
  EXPECT_EQ(number_at(naive, {"max"}), 0.6);
  const json::Value& buckets = at(naive, {"buckets"});
  ASSERT_EQ(items(buckets).size(), 6u);
  const std::vector<std::string> naive_counts = {"2", "1", "0", "0", "1", "0"};  // 0, 0, 0.05, 0.6
  for (std::size_t b = 0; b < 6; ++b)
    EXPECT_EQ(text_at(items(buckets)[b], {"cases"}), naive_counts[b]) << b;
  EXPECT_EQ(number_at(items(buckets)[1], {"from"}), 1.0 / 64);
  EXPECT_EQ(number_at(items(buckets)[1], {"to"}), 1.0 / 16);
  EXPECT_EQ(text_at(items(buckets)[5], {"to"}), "inf");

  const json::Value& fa2 = at(tensor_of(results, "fp16", "fa2", "O"), {"error_over_bound"});
  EXPECT_EQ(text_at(fa2, {"max"}), "inf");
  const std::vector<std::string> fa2_counts = {"0", "0", "0", "1", "0", "2"};  // 0.3, 1.5, inf
  for (std::size_t b = 0; b < 6; ++b)
    EXPECT_EQ(text_at(items(at(fa2, {"buckets"}))[b], {"cases"}), fa2_counts[b]) << b;
}

TEST_F(StandardReport, RatioToTheNaiveBaselineSkipsZeroBaselines) {
  // fa2 O: 2e-4/1e-4, 9e-4/3e-4, inf/2e-4.
  const json::Value& fa2 = at(tensor_of(results, "fp16", "fa2", "O"), {"baseline_ratio"});
  EXPECT_EQ(text_at(fa2, {"cases"}), "3");
  EXPECT_EQ(text_at(fa2, {"skipped"}), "0");
  EXPECT_DOUBLE_EQ(number_at(fa2, {"median"}), 3);  // 9e-4 / 3e-4, rounded
  EXPECT_EQ(text_at(fa2, {"max"}), "inf");
  // naive O: C's baseline error is 0, skipped; the others are 1.
  const json::Value& naive = at(tensor_of(results, "fp16", "naive", "O"), {"baseline_ratio"});
  EXPECT_EQ(text_at(naive, {"cases"}), "3");
  EXPECT_EQ(text_at(naive, {"skipped"}), "1");
  EXPECT_EQ(text_at(naive, {"median"}), "1");
  EXPECT_EQ(text_at(naive, {"max"}), "1");
  // bf16 fa2 O: K's baseline error is 0 (its own is not), skipped; M: 0.02 / 0.01.
  const json::Value& bf16 = at(tensor_of(results, "bf16", "fa2", "O"), {"baseline_ratio"});
  EXPECT_EQ(text_at(bf16, {"cases"}), "1");
  EXPECT_EQ(text_at(bf16, {"skipped"}), "1");
  EXPECT_EQ(number_at(bf16, {"max"}), 2);
}

TEST_F(StandardReport, RatioToRule3sToleranceIsInResultsJson) {
  // fa2 O: 2e-4, 9e-4 and inf over the fixture's tolerance 0.0019441231640973243.
  const json::Value& fa2 = at(tensor_of(results, "fp16", "fa2", "O"), {"regression_margin"});
  EXPECT_EQ(text_at(fa2, {"cases"}), "3");
  EXPECT_EQ(text_at(fa2, {"skipped"}), "0");
  EXPECT_NEAR(number_at(fa2, {"median"}), 9e-4 / 0.0019441231640973243, 1e-3);
  EXPECT_EQ(text_at(fa2, {"max"}), "inf");
}

TEST_F(StandardReport, ListsWorstCasesByErrorOverBoundWithTiesByUlps) {
  const json::Value& fp16 = at(dtype_of(results, "fp16"), {"worst_cases"});
  ASSERT_EQ(items(fp16).size(), 5u);
  // I (inf), H (1.5), G (0.6), B (0.3), A (0.05); C and N (0) are left out.
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"fa2", "6"}, {"fa2", "5"}, {"naive", "5"}, {"fa2", "0"}, {"naive", "0"}};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(text_at(items(fp16)[k], {"impl"}), expected[k].first) << k;
    EXPECT_EQ(text_at(items(fp16)[k], {"index"}), expected[k].second) << k;
  }
  EXPECT_EQ(text_at(items(fp16)[0], {"error_over_bound"}), "inf");
  EXPECT_EQ(text_at(items(fp16)[1], {"tensor"}), "O");
  EXPECT_EQ(number_at(items(fp16)[1], {"error_over_bound"}), 1.5);
  EXPECT_EQ(text_at(items(fp16)[1], {"max_ulps"}), "8");
  // bf16: L and M tie at 0.5; M has more ULPs (5 against 3).
  const json::Value& bf16 = at(dtype_of(results, "bf16"), {"worst_cases"});
  ASSERT_EQ(items(bf16).size(), 4u);
  EXPECT_EQ(text_at(items(bf16)[0], {"impl"}), "fa2");
  EXPECT_EQ(text_at(items(bf16)[1], {"impl"}), "naive");
  EXPECT_EQ(text_at(items(bf16)[1], {"index"}), "4");
}

TEST_F(StandardReport, SavesEachWorstCaseAsAReplayableCaseFile) {
  for (const char* dtype : {"fp16", "bf16"})
    for (const json::Value& w : items(at(dtype_of(results, dtype), {"worst_cases"}))) {
      const std::string file = text_at(w, {"case_file"});
      const fs::path path = dir.path() / "out" / file;
      ASSERT_TRUE(fs::is_regular_file(path)) << file;
      const json::Value c = json::parse(read_text(path));
      EXPECT_EQ(text_at(c, {"format"}), "flashproof-case");
      EXPECT_EQ(text_at(c, {"dtype"}), dtype);
      EXPECT_EQ(text_at(c, {"impl"}), text_at(w, {"impl"}));
      EXPECT_EQ(text_at(w, {"replay"}), "flashproof replay " + path.string());
    }
  // The case object is written back byte for byte as the case-file writer lays it out.
  EXPECT_EQ(read_text(dir.path() / "out" / "cases" / "fp16-fa2-5.json"),
            case_object_text(standard_record('H')) + "\n");
  EXPECT_EQ(text_at(items(at(dtype_of(results, "fp16"), {"worst_cases"}))[0], {"case_file"}),
            "cases/fp16-fa2-6.json");
}

TEST_F(StandardReport, ListsFailuresAndCrashesWithTheirReplayCommands) {
  const json::Value& failures = at(dtype_of(results, "fp16"), {"failures"});
  ASSERT_EQ(items(failures).size(), 3u);
  EXPECT_EQ(text_at(items(failures)[0], {"status"}), "crash");
  EXPECT_EQ(text_at(items(failures)[0], {"index"}), "2");
  EXPECT_EQ(text_at(items(failures)[0], {"error"}), "signal 11 (SIGSEGV)");
  EXPECT_EQ(text_at(items(failures)[0], {"replay"}), "flashproof replay shard0/failures/2-fa2.json");
  EXPECT_EQ(text_at(items(failures)[1], {"status"}), "fail");
  EXPECT_EQ(text_at(items(failures)[1], {"index"}), "5");
  ASSERT_EQ(items(at(items(failures)[1], {"failed_tensors"})).size(), 1u);
  EXPECT_EQ(text_of(items(at(items(failures)[1], {"failed_tensors"}))[0]), "O");
  EXPECT_EQ(text_at(items(failures)[2], {"index"}), "6");
  EXPECT_EQ(text_at(items(failures)[2], {"failure_file"}), "failures/6-fa2.json");
  EXPECT_TRUE(items(at(dtype_of(results, "bf16"), {"failures"})).empty());
}

TEST_F(StandardReport, SummaryAndPageShowTheSameNumbers) {
  const std::string md = read_text(dir.path() / "out" / "summary.md");
  const std::string html = read_text(dir.path() / "out" / "index.html");
  for (const std::string* page : {&md, &html}) {
    const bool is_md = page == &md;
    const std::string cell = is_md ? " | " : "</td><td class=\"number\">";
    const std::string alert = is_md ? " | " : "</td><td class=\"number alert\">";
    // fp16 fa2: 5 cases, 1 pass, 2 fail (0 of them non-finite), 1 out-of-domain, 0 not judged,
    // 0 pass and 0 fail by the baseline rule, 1 crash, 2 not in domain.
    EXPECT_NE(page->find("fa2" + cell + "5" + cell + "1" + alert + "2" + cell + "0" + cell + "1" + cell + "0" + cell +
                         "0" + cell + "0" + alert + "1" + cell + "2"),
              std::string::npos)
        << (is_md ? "summary.md" : "index.html");
    // fp16 fa2 O: 4 cases (1 pass, 2 fail, 1 ood, 0 not judged, 1 reporting rule 3), ULPs max inf,
    // p50 8, p99 inf, rel max inf, p50 0.004, p99 inf, ratio median 3, max inf.
    EXPECT_NE(page->find("O" + cell + "4" + cell + "1" + alert + "2" + cell + "1" + cell + "0" + cell + "1" + cell + "inf" +
                         cell + "8" + cell + "inf" + cell + "inf" + cell + "0.004" + cell + "inf" +
                         cell + "3" + cell + "inf"),
              std::string::npos)
        << (is_md ? "summary.md" : "index.html");
    EXPECT_NE(page->find("flashproof replay " + (dir / "out") + "/cases/fp16-fa2-6.json"),
              std::string::npos);
    EXPECT_NE(page->find("flashproof replay shard0/failures/2-fa2.json"), std::string::npos);
    EXPECT_NE(page->find("signal 11 (SIGSEGV)"), std::string::npos);
    EXPECT_NE(page->find("14 records from 2 inputs"), std::string::npos);
  }
  // The page's plots: per dtype 3 plots for O, 3 for dQ, dK, dV (fp16 only), and a histogram.
  std::size_t svgs = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 7u + 4u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Self-contained: nothing to fetch.
  for (const char* fetch : {"<link", "src=", "url(", "href=\"http", "@import"})
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
}

}  // namespace
}  // namespace flashproof::report::testing
