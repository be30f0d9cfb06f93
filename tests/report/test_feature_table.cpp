// The report's verdicts per attention feature (docs/reports.md): a campaign with packed batches
// gets a "Per feature" table with a row per implementation and feature; its twin, a campaign of
// dense batches only, has none.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

RecordSpec record(long long index, bool packed, const std::string& status) {
  RecordSpec r;
  r.index = index;
  r.packed = packed;
  r.status = status;
  TensorSpec o;
  o.name = "O";
  o.verdict = status;
  o.error_over_bound = status == "fail" ? 3 : 0.1;
  TensorSpec lse = o;
  lse.name = "LSE";
  lse.verdict = "pass";
  lse.error_over_bound = 0.1;
  r.tensors = {o, lse};
  return r;
}

TEST(FeatureTable, APackedCampaignHasARowPerFeature) {
  TempDir dir;
  const std::filesystem::path in = dir / "in", out = dir / "out";
  write_campaign(in.string(), campaign_json("42", 0, 1),
                 {record_line(record(0, true, "pass")), record_line(record(1, true, "fail")),
                  record_line(record(2, false, "pass"))});
  const CommandResult run = run_report({in.string(), "--out", out.string()});
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string md = read_text(out / "summary.md");
  EXPECT_NE(md.find("### Per feature"), std::string::npos) << md;
  EXPECT_NE(md.find("| naive | dense | 1 | 1 | 0 | 0 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| naive | packed | 2 | 1 | 1 | 0 | 0 | 0 |"), std::string::npos) << md;
  EXPECT_NE(read_text(out / "index.html").find("<h3>Per feature</h3>"), std::string::npos);

  const std::filesystem::path dense_in = dir / "dense", dense_out = dir / "dense-out";
  write_campaign(dense_in.string(), campaign_json("42", 0, 1), {record_line(record(0, false, "pass"))});
  const CommandResult twin = run_report({dense_in.string(), "--out", dense_out.string()});
  ASSERT_EQ(twin.status, 0) << twin.err;
  EXPECT_EQ(read_text(dense_out / "summary.md").find("Per feature"), std::string::npos);
}

}  // namespace
}  // namespace flashproof::report::testing
