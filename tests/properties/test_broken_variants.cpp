// The property suite must catch each deliberately broken variant of the naive baseline
// (kernels/naive: NaiveFlaw), and the property named here is the one expected to: a property
// that cannot fail on a known defect is not trusted. Every property of the suite appears here.
#include <gtest/gtest.h>

#include <string>

#include "harness/case_file.h"
#include "kernels/naive/naive_attention.h"
#include "properties/runner.h"

namespace flashproof::properties {
namespace {

struct Expectation {
  NaiveFlaw flaw;
  const char* property;
  const char* why_contains = "";  // the part of the property expected to catch it
};

const Expectation kExpectations[] = {
    Expectation{NaiveFlaw::mask_off_by_one, "accuracy-regression"},
    Expectation{NaiveFlaw::mask_off_by_one, "prefix-independence"},
    Expectation{NaiveFlaw::missing_rescale, "accuracy-regression"},
    Expectation{NaiveFlaw::missing_rescale, "key-value-permutation"},
    Expectation{NaiveFlaw::wrong_lse, "accuracy-regression"},
    Expectation{NaiveFlaw::dk_without_group_sum, "accuracy-regression"},
    Expectation{NaiveFlaw::dk_without_group_sum, "gradient-finite-differences"},
    Expectation{NaiveFlaw::nan_on_empty_row, "differential"},
    Expectation{NaiveFlaw::nan_on_empty_row, "empty-rows"},
    Expectation{NaiveFlaw::odd_rows_reversed, "query-permutation"},
    Expectation{NaiveFlaw::alternating_order, "forward-determinism"},
    Expectation{NaiveFlaw::alternating_order, "backward-determinism"},
    Expectation{NaiveFlaw::batch_dependent_order, "batch-independence"},
    Expectation{NaiveFlaw::wrong_gqa_head, "gqa-equals-mha"},
    Expectation{NaiveFlaw::saturating_output, "value-scaling"},
    Expectation{NaiveFlaw::multiplies_masked, "memory"},
    // The agreement check run with a flawed baseline in FA1's place.
    Expectation{NaiveFlaw::missing_rescale, "fa1-matches-fa2"},
    // Both halves of tile independence: the alternate's own verdict, and the shipped shapes'
    // results against the alternate's within 2x the bound.
    Expectation{NaiveFlaw::alternate_tiles_skip_rescale, "tile-independence", "naive-flawed:missing-rescale: "},
    Expectation{NaiveFlaw::shipped_tiles_skip_rescale, "tile-independence", "and alternate tiles"},
};

void PrintTo(const Expectation& e, std::ostream* os) { *os << naive_flaw_name(e.flaw) << " caught by " << e.property; }

class BrokenVariants : public ::testing::TestWithParam<Expectation> {};

TEST_P(BrokenVariants, AreCaught) {
  const Expectation& e = GetParam();
  const std::unique_ptr<AttentionImpl> broken = make_naive_attention(e.flaw);
  const Property* property = find_property(e.property);
  ASSERT_NE(property, nullptr);
  // Up to 200 cases: some flaws need a particular case (an empty row, GQA, f V beyond the clamp).
  const PropertyRun run =
      run_property(*property, *broken, std::string("broken/") + naive_flaw_name(e.flaw) + "/" + e.property, 200);
  EXPECT_FALSE(run.passed) << e.property << " did not catch " << broken->name() << " in " << run.cases << " cases";
  EXPECT_NE(run.why.find(e.why_contains), std::string::npos) << run.why;
  ASSERT_TRUE(run.counterexample.has_value());
  // The saved case file names the property and reproduces the failure.
  const CaseFile saved = read_case_file(run.case_file);
  EXPECT_EQ(saved.property, e.property);
  EXPECT_EQ(saved.c.impl, broken->name());
  EXPECT_FALSE(property->check(*broken, saved.c).holds) << run.case_file;
  EXPECT_NE(run.reproduce.find("reproduce="), std::string::npos);
  std::cout << broken->name() << " caught by " << e.property << " after " << run.cases << " passing cases: " << run.why
            << "\n";
}

// Every property has at least one flaw it must catch.
TEST(BrokenVariantsList, NamesEveryProperty) {
  for (const Property& p : all_properties()) {
    bool named = false;
    for (const Expectation& e : kExpectations) named = named || std::string(e.property) == p.name;
    EXPECT_TRUE(named) << p.name << " is not shown failing on any broken variant";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Naive, BrokenVariants,
    ::testing::ValuesIn(kExpectations),
    [](const auto& info) {
      std::string s = std::string(naive_flaw_name(info.param.flaw)) + "__" + info.param.property;
      for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

}  // namespace
}  // namespace flashproof::properties
