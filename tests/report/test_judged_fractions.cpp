// The "Judged" counts (report/judged_fractions.h): records by logit class and tensors by name, each
// judged only when pass or fail; a crash counts in its class (or "unknown") and in no tensor.
#include <gtest/gtest.h>

#include "report/judged_fractions.h"

namespace flashproof::report {
namespace {

FuzzRecord record(CaseStatus status, std::optional<double> logit, std::vector<std::pair<std::string, Verdict>> tensors) {
  FuzzRecord r;
  r.status = status;
  r.logit_scale = logit;
  for (const auto& [name, v] : tensors) {
    TensorResult t;
    t.name = name;
    t.verdict = v;
    r.tensors.push_back(t);
  }
  return r;
}

TEST(JudgedFractions, CountsRecordsByLogitClassAndTensorsByName) {
  const std::vector<FuzzRecord> records = {
      record(CaseStatus::pass, 3.0, {{"O", Verdict::pass}, {"dV", Verdict::pass}}),
      record(CaseStatus::not_judged, 5e4, {{"O", Verdict::pass}, {"dV", Verdict::not_judged}}),
      record(CaseStatus::fail, 2e7, {{"O", Verdict::fail}, {"dV", Verdict::not_judged}}),
      record(CaseStatus::out_of_domain, 1e30, {{"O", Verdict::out_of_domain}}),
      record(CaseStatus::crash, std::nullopt, {}),
  };
  const JudgedFractions f = judged_fractions(records);
  EXPECT_EQ(f.all.total, 5u);
  EXPECT_EQ(f.all.judged, 2u);
  EXPECT_EQ(f.all.not_judged, 1u);
  EXPECT_EQ(f.all.out_of_domain, 1u);
  EXPECT_EQ(f.all.crash, 1u);
  ASSERT_EQ(f.by_class.size(), 4u);  // <10, 1e3-1e6, >=1e6, unknown: 10-1e3 is absent
  EXPECT_EQ(f.by_class[0].label, "<10");
  EXPECT_EQ(f.by_class[1].label, "1e3-1e6");
  EXPECT_EQ(f.by_class[1].not_judged, 1u);
  EXPECT_EQ(f.by_class[2].label, ">=1e6");
  EXPECT_EQ(f.by_class[2].total, 2u);
  EXPECT_EQ(f.by_class[2].judged, 1u);
  EXPECT_EQ(f.by_class[3].label, "unknown");
  EXPECT_EQ(f.by_class[3].crash, 1u);
  ASSERT_EQ(f.by_tensor.size(), 2u);
  EXPECT_EQ(f.by_tensor[0].label, "O");
  EXPECT_EQ(f.by_tensor[0].judged, 3u);
  EXPECT_EQ(f.by_tensor[1].label, "dV");
  EXPECT_EQ(f.by_tensor[1].judged, 1u);
  EXPECT_EQ(f.by_tensor[1].not_judged, 2u);
  EXPECT_EQ(judged_summary(f),
            "judged (pass or fail) 2 of 5 records (40%), by the baseline rule 0; by the largest |scale q.k|: <10 1/1, 1e3-1e6 0/1, >=1e6 1/2, "
            "unknown 0/1; per tensor: O 3/4, dV 1/3");
}

// The second tier's verdicts count apart, never as judged: a record or tensor passed or failed by
// the baseline rule is in baseline_rule, not in judged and not in not_judged.
TEST(JudgedFractions, BaselineRuleVerdictsCountApartFromTheFirstTier) {
  const std::vector<FuzzRecord> records = {
      record(CaseStatus::pass_baseline_rule, 2e3, {{"O", Verdict::pass}, {"dV", Verdict::pass_baseline_rule}}),
      record(CaseStatus::fail_baseline_rule, 3e3, {{"O", Verdict::fail_baseline_rule}, {"dV", Verdict::not_judged}}),
      record(CaseStatus::pass, 4e3, {{"O", Verdict::pass}, {"dV", Verdict::pass}}),
  };
  const JudgedFractions f = judged_fractions(records);
  EXPECT_EQ(f.all.total, 3u);
  EXPECT_EQ(f.all.judged, 1u);
  EXPECT_EQ(f.all.baseline_rule, 2u);
  EXPECT_EQ(f.all.not_judged, 0u);
  ASSERT_EQ(f.by_class.size(), 1u);
  EXPECT_EQ(f.by_class[0].baseline_rule, 2u);
  ASSERT_EQ(f.by_tensor.size(), 2u);
  EXPECT_EQ(f.by_tensor[0].judged, 2u);         // O
  EXPECT_EQ(f.by_tensor[0].baseline_rule, 1u);
  EXPECT_EQ(f.by_tensor[1].judged, 1u);         // dV
  EXPECT_EQ(f.by_tensor[1].baseline_rule, 1u);
  EXPECT_EQ(f.by_tensor[1].not_judged, 1u);
  EXPECT_EQ(judged_summary(f),
            "judged (pass or fail) 1 of 3 records (33%), by the baseline rule 2; by the largest |scale q.k|: 1e3-1e6 1/3; "
            "per tensor: O 2/3, dV 1/3");
}

}  // namespace
}  // namespace flashproof::report
