// A campaign's pairs with no record (the implementation does not run the case: outside its
// declared support, or refused when it ran) and its cases fitted into a declared support, as its
// ended.json counts them (fuzz/end_marker.h): the report's headline and inputs table say them, so
// a campaign over a kernel that refuses much does not read as whole. Its twin, an ended.json
// without the counts (older, or nothing refused), says nothing of them.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

RecordSpec passing(long long index) {
  RecordSpec r;
  r.index = index;
  r.impl = "python:k";
  TensorSpec o;
  o.name = "O";
  o.max_ulps = 1;
  o.error_over_bound = 0.1;
  TensorSpec lse = o;
  lse.name = "LSE";
  r.tensors = {o, lse};
  return r;
}

CommandResult report_of(const std::string& input, const std::string& out, const std::string& counts) {
  write_campaign(input, campaign_json("42", 0, 1), {record_line(passing(0)), record_line(passing(1))});
  write_text(std::filesystem::path(input) / "ended.json",
             "{\"format\": \"flashproof-campaign-end\", \"version\": 1, \"ended\": \"2026-11-28T10:00:00Z\", "
             "\"records\": 2, \"why\": \"every case of the shard ran\"" + counts + "}\n");
  return run_report({input, "--out", out});
}

TEST(UnsupportedCounts, TheHeadlineAndTheInputsTableSayThem) {
  TempDir dir;
  const CommandResult run =
      report_of(dir / "in", dir / "out", R"(, "unsupported": {"python:k": 3}, "fitted": {"python:k": 5})");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("; 3 unsupported (no record); 5 fitted into a declared support"), std::string::npos) << run.out;
  const std::string md = read_text(std::filesystem::path(dir / "out") / "summary.md");
  EXPECT_NE(md.find("| unsupported | fitted |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2026-11-28T10:00:00Z | 3 | 5 |"), std::string::npos) << md;

  const CommandResult twin = report_of(dir / "twin", dir / "twin-out", "");
  ASSERT_EQ(twin.status, 0) << twin.err;
  EXPECT_EQ(twin.out.find("unsupported"), std::string::npos) << twin.out;
  EXPECT_NE(read_text(std::filesystem::path(dir / "twin-out") / "summary.md").find("| 2026-11-28T10:00:00Z | - | - |"),
            std::string::npos);
}

}  // namespace
}  // namespace flashproof::report::testing
