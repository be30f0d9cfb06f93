// Failures by NaN or inf (an element returned NaN or inf where the exact value is finite) are in no
// error statistic: the check leaves them out of max_ulps, max_rel, max_abs and error / bound,
// which are over the finite values. A campaign whose failures are all such, with every finite
// error / bound below 1, must not read as clean: the headline counts them, every table showing
// error / bound has a column counting them, results.json has the counts, and the worst cases
// rank them first (as error / bound nan or inf). Its twin holds the same records with the NaN and
// inf counts at 0: its report differs exactly in those counts.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

namespace fs = std::filesystem;

TensorSpec checked(const std::string& name, double ulps, double error_over_bound, const std::string& verdict = "pass",
                  long long nan = 0, long long inf = 0) {
  TensorSpec t;
  t.name = name;
  t.max_ulps = ulps;
  t.max_rel = 1e-3;
  t.max_abs = 1e-4;
  t.baseline_max_abs = 1e-4;
  t.error_over_bound = error_over_bound;
  t.verdict = verdict;
  t.nan_mismatch = nan;
  t.inf_mismatch = inf;
  return t;
}

RecordSpec record(long long index, const std::string& impl, const std::string& status,
                  std::vector<TensorSpec> tensors) {
  RecordSpec r;
  r.index = index;
  r.impl = impl;
  r.status = status;
  r.tensors = std::move(tensors);
  if (status == "fail") {
    r.failure_file = "failures/" + std::to_string(index) + "-" + impl + ".json";
    r.replay = "flashproof replay nan/" + r.failure_file;
  }
  return r;
}

// fp16, naive and fa2, cases 0-3 (3 with backward). fa2 passes case 0 with error / bound 0.609,
// the largest finite one, and fails the others by non-finite values only, their finite error /
// bound small: case 1's O has 4 NaN, case 2's O 2 inf, case 3's dQ 3 NaN and 1 inf.
// With twin, the same records with no NaN or inf counted (the fails stay fails).
std::vector<std::string> campaign_lines(bool twin) {
  const long long k = twin ? 0 : 1;
  const TensorSpec lse = checked("LSE", 1, 0.01);
  auto backward = [&](TensorSpec o, TensorSpec dq) {
    return std::vector<TensorSpec>{o, lse, dq, checked("dK", 4, 0.05), checked("dV", 3, 0.05)};
  };
  std::vector<RecordSpec> records = {
      record(0, "naive", "pass", {checked("O", 1, 0.05), lse}),
      record(0, "fa2", "pass", {checked("O", 3, 0.609), lse}),
      record(1, "naive", "pass", {checked("O", 1, 0.05), lse}),
      record(1, "fa2", "fail", {checked("O", 2, 0.2, "fail", 4 * k, 0), lse}),
      record(2, "naive", "pass", {checked("O", 1, 0.05), lse}),
      record(2, "fa2", "fail", {checked("O", 1, 0.1, "fail", 0, 2 * k), lse}),
      record(3, "naive", "pass", backward(checked("O", 1, 0.05), checked("dQ", 2, 0.05))),
      record(3, "fa2", "fail", backward(checked("O", 1, 0.1), checked("dQ", 5, 0.3, "fail", 3 * k, 1 * k))),
  };
  std::vector<std::string> lines;
  for (const RecordSpec& r : records) lines.push_back(record_line(r));
  return lines;
}

// One cell of an expected table row, as summary.md and index.html write it.
struct Cell {
  std::string text;
  enum Kind { text_cell, number, alert, status_alert } kind = number;
};

// The row's cells in order, in Markdown ("| a | b |") or HTML ("<td>a</td><td ...>b</td>").
std::string row(bool markdown, const std::vector<Cell>& cells) {
  std::string s = markdown ? "|" : "<tr>";
  for (const Cell& c : cells) {
    if (markdown) {
      s += " " + c.text + " |";
      continue;
    }
    const char* cls = c.kind == Cell::text_cell      ? ""
                      : c.kind == Cell::number       ? " class=\"number\""
                      : c.kind == Cell::alert        ? " class=\"number alert\""
                                                     : " class=\"alert\"";
    s += "<td" + std::string(cls) + ">" + c.text + "</td>";
  }
  return s;
}

Cell name(const std::string& s) { return {s, Cell::text_cell}; }
Cell num(const std::string& s) { return {s, Cell::number}; }
Cell alert(const std::string& s) { return {s, Cell::alert}; }

class NonFiniteReport : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const bool twin : {false, true}) {
      const std::string input = dir / (twin ? "twin" : "nan"), out = dir / (twin ? "twin-out" : "out");
      write_campaign(input, campaign_json("42", 0, 1), campaign_lines(twin));
      CommandResult& run = twin ? twin_run : nan_run;
      run = run_report({input, "--out", out});
      ASSERT_EQ(run.status, 0) << run.err;
    }
    results = read_results(dir.path() / "out" / "results.json");
    twin_results = read_results(dir.path() / "twin-out" / "results.json");
    md = read_text(dir.path() / "out" / "summary.md");
    html = read_text(dir.path() / "out" / "index.html");
    twin_md = read_text(dir.path() / "twin-out" / "summary.md");
  }

  // The summary line that `report` prints after "report: PATH".
  static std::string headline(const CommandResult& run) {
    const auto end = run.out.find('\n');
    return end == std::string::npos ? "" : run.out.substr(end + 1);
  }

  TempDir dir;
  CommandResult nan_run, twin_run;
  json::Value results, twin_results;
  std::string md, html, twin_md;
};

TEST_F(NonFiniteReport, HeadlineCountsNonFiniteFailuresAndSaysTheLargestErrorOverBoundIsFinite) {
  const std::string expected =
      "8 records from 1 input: 5 pass, 3 fail (3 non-finite), 0 out-of-domain, 0 not judged, 0 crash; "
      "largest finite error/bound 0.609 (fp16 fa2 case 0 O)";
  EXPECT_EQ(headline(nan_run), expected + "\n");
  EXPECT_NE(md.find("\n" + expected + ".\n"), std::string::npos) << md;
  EXPECT_NE(html.find("<p class=\"summary\">" + expected + ".</p>"), std::string::npos);
  EXPECT_EQ(text_at(results, {"summary"}), expected);
  EXPECT_EQ(text_at(results, {"non_finite_fail"}), "3");
  EXPECT_EQ(number_at(results, {"largest_finite_error_over_bound"}), 0.609);
  EXPECT_EQ(number_at(dtype_of(results, "fp16"), {"largest_finite_error_over_bound"}), 0.609);
}

TEST_F(NonFiniteReport, ResultsJsonCountsThemPerImplementationAndTensor) {
  EXPECT_EQ(text_at(impl_of(results, "fp16", "fa2"), {"status", "fail"}), "3");
  EXPECT_EQ(text_at(impl_of(results, "fp16", "fa2"), {"non_finite_fail"}), "3");
  EXPECT_EQ(text_at(impl_of(results, "fp16", "naive"), {"non_finite_fail"}), "0");
  const json::Value& o = tensor_of(results, "fp16", "fa2", "O");
  EXPECT_EQ(text_at(o, {"non_finite_fail"}), "2");  // cases 1 (NaN) and 2 (inf)
  // The histogram stays over the finite values: its max is case 0's, not a failure's.
  EXPECT_EQ(number_at(o, {"error_over_bound", "max"}), 0.609);
  EXPECT_EQ(text_at(o, {"error_over_bound", "cases"}), "4");
  EXPECT_EQ(text_at(tensor_of(results, "fp16", "fa2", "dQ"), {"non_finite_fail"}), "1");
  EXPECT_EQ(text_at(tensor_of(results, "fp16", "fa2", "LSE"), {"non_finite_fail"}), "0");
  const json::Value& failures = at(dtype_of(results, "fp16"), {"failures"});
  ASSERT_EQ(items(failures).size(), 3u);
  ASSERT_EQ(items(at(items(failures)[2], {"non_finite_tensors"})).size(), 1u);
  EXPECT_EQ(text_of(items(at(items(failures)[2], {"non_finite_tensors"}))[0]), "dQ");
}

TEST_F(NonFiniteReport, WorstCasesRankThemAboveEveryFiniteRatioAsNanOrInf) {
  const json::Value& worst = at(dtype_of(results, "fp16"), {"worst_cases"});
  ASSERT_EQ(items(worst).size(), 5u);
  // NaN first (case 3's dQ before case 1's O by ULPs, 5 against 2), then inf (case 2), then 0.609.
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"3", "dQ"}, {"1", "O"}, {"2", "O"}, {"0", "O"}};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(text_at(items(worst)[k], {"impl"}), "fa2") << k;
    EXPECT_EQ(text_at(items(worst)[k], {"index"}), expected[k].first) << k;
    EXPECT_EQ(text_at(items(worst)[k], {"tensor"}), expected[k].second) << k;
  }
  EXPECT_EQ(text_at(items(worst)[0], {"error_over_bound"}), "nan");
  EXPECT_EQ(number_at(items(worst)[0], {"finite_error_over_bound"}), 0.3);
  EXPECT_EQ(text_at(items(worst)[0], {"nan_mismatch"}), "3");
  EXPECT_EQ(text_at(items(worst)[0], {"inf_mismatch"}), "1");
  EXPECT_EQ(text_at(items(worst)[2], {"error_over_bound"}), "inf");
  EXPECT_EQ(number_at(items(worst)[3], {"error_over_bound"}), 0.609);
  EXPECT_EQ(text_at(items(worst)[3], {"nan_mismatch"}), "0");

  for (const std::string* page : {&md, &html}) {
    const bool markdown = page == &md;
    // #, implementation, case, kind, status, tensor, error / bound, non-finite, ULPs.
    const std::string first = row(markdown, {num("1"), name("fa2"), name("case 3"), name("normal"),
                                             {"fail", Cell::status_alert}, name("dQ"), num("nan"),
                                             alert("3 NaN, 1 inf"), num("5")});
    EXPECT_NE(page->find(first), std::string::npos) << first;
    const std::string finite = row(markdown, {num("4"), name("fa2"), name("case 0"), name("normal"),
                                              name("pass"), name("O"), num("0.609"), num("0"), num("3")});
    EXPECT_NE(page->find(finite), std::string::npos) << finite;
    // The failures list names the NaN and inf elements of the failed tensors.
    EXPECT_NE(page->find("dQ (3 NaN, 1 inf) failed"), std::string::npos);
  }
}

TEST_F(NonFiniteReport, EveryTableWithErrorOverBoundHasANonFiniteColumn) {
  for (const std::string* page : {&md, &html}) {
    const bool markdown = page == &md;
    // The status table: implementation, cases, pass, fail, non-finite fail, out-of-domain, not
    // judged, crash, not in domain.
    const std::string status = row(markdown, {name("fa2"), num("4"), num("1"), alert("3"), alert("3"), num("0"),
                                              num("0"), num("0"), num("0")});
    EXPECT_NE(page->find(status), std::string::npos) << status;
    // The error / bound table: implementation, tensor, cases, the six buckets, max, non-finite
    // fail, no finite bound, bound >= size. fa2 O: 0.609, 0.2, 0.1, 0.1.
    const std::string o = row(markdown, {name("fa2"), name("O"), num("4"), num("0"), num("0"), num("3"), num("0"),
                                         num("1"), num("0"), num("0.609"), alert("2"), num("0"), num("0")});
    EXPECT_NE(page->find(o), std::string::npos) << o;
    const std::string dq = row(markdown, {name("fa2"), name("dQ"), num("1"), num("0"), num("0"), num("0"),
                                          num("1"), num("0"), num("0"), num("0.3"), alert("1"), num("0"), num("0")});
    EXPECT_NE(page->find(dq), std::string::npos) << dq;
  }
  EXPECT_NE(md.find("| max | non-finite fail | no finite bound |"), std::string::npos);
  EXPECT_NE(html.find("<th>max</th><th>non-finite fail</th><th>no finite bound</th>"), std::string::npos);
  // The error / bound plot says what its bars leave out.
  EXPECT_NE(html.find("3 cases failed with NaN or inf where the exact value is finite"), std::string::npos);
}

// The twin's records differ only in their NaN and inf counts, and so do the reports: a report that
// did not read them would give the two the same headline and tables.
TEST_F(NonFiniteReport, TheTwinWithoutNanOrInfDiffersExactlyInTheirCounts) {
  std::string nan_headline = headline(nan_run);
  const std::string twin_headline = headline(twin_run);
  const auto at_count = nan_headline.find("(3 non-finite)");
  ASSERT_NE(at_count, std::string::npos) << nan_headline;
  EXPECT_EQ(nan_headline.replace(at_count, 14, "(0 non-finite)"), twin_headline);
  EXPECT_EQ(text_at(twin_results, {"non_finite_fail"}), "0");
  EXPECT_EQ(text_at(impl_of(twin_results, "fp16", "fa2"), {"non_finite_fail"}), "0");
  EXPECT_EQ(text_at(tensor_of(twin_results, "fp16", "fa2", "O"), {"non_finite_fail"}), "0");
  // The same finite statistics in both.
  for (const char* tensor : {"O", "LSE", "dQ", "dK", "dV"})
    for (const char* field : {"error_over_bound", "max_ulps", "max_rel"})
      EXPECT_EQ(json::write(at(tensor_of(results, "fp16", "fa2", tensor), {field})),
                json::write(at(tensor_of(twin_results, "fp16", "fa2", tensor), {field})))
          << tensor << " " << field;
  // The bound table's fa2 O row, but for the non-finite column.
  const std::string o = "| fa2 | O | 4 | 0 | 0 | 3 | 0 | 1 | 0 | 0.609 | ";
  EXPECT_NE(md.find(o + "2 | 0 | 0 |"), std::string::npos);
  EXPECT_NE(twin_md.find(o + "0 | 0 | 0 |"), std::string::npos);
  // The twin's worst cases are by the finite ratios alone.
  EXPECT_EQ(number_at(items(at(dtype_of(twin_results, "fp16"), {"worst_cases"}))[0], {"error_over_bound"}), 0.609);
}

}  // namespace
}  // namespace flashproof::report::testing
