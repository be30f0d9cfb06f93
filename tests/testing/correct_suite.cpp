// The helper on a correct implementation (the naive baseline forwarded): every registered test
// passes (ctest label `testing`), and the registration itself is checked here.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "kernels/registry.h"
#include "properties/properties.h"
#include "testing/implementation_tests.h"
#include "tests/testing/forwarding_attention.h"

namespace {
flashproof::testkit::SuiteOptions small_runs() {
  flashproof::testkit::SuiteOptions o;
  o.property_cases = 8;
  o.campaign_cases = 6;
  o.campaign_max_seqlen = 64;
  o.campaign_max_work = 1 << 16;
  return o;
}
}  // namespace

FLASHPROOF_TEST_IMPLEMENTATION(ForwardingNaive,
                               [] { return std::make_unique<flashproof::testkit::ForwardingAttention>("forwarding-naive", false); },
                               small_runs());

namespace flashproof::testkit {
namespace {

TEST(Registration, FindsTheImplementationByNameAndRegistersEveryApplicableProperty) {
  AttentionImpl* impl = find_implementation("forwarding-naive");
  ASSERT_NE(impl, nullptr) << "campaigns and replays look implementations up by name";
  std::set<std::string> expected{"fuzz_campaign"};
  for (const properties::Property& p : properties::all_properties())
    if (p.applies(*impl)) {
      std::string name = p.name;
      for (char& c : name) c = c == '-' ? '_' : c;
      expected.insert(name);
    }
  std::set<std::string> registered;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i)
    if (std::string(unit.GetTestSuite(i)->name()) == "ForwardingNaive")
      for (int j = 0; j < unit.GetTestSuite(i)->total_test_count(); ++j)
        registered.insert(unit.GetTestSuite(i)->GetTestInfo(j)->name());
  EXPECT_EQ(registered, expected);
  EXPECT_GE(registered.size(), 10u);  // the naive baseline meets all but the FA1 and tile properties
}

TEST(Registration, RefusesTakenNamesWithOneLine) {
  const auto make = [] { return std::make_unique<ForwardingAttention>("forwarding-naive", false); };
  try {
    register_implementation_tests("ForwardingNaive", make);
    ADD_FAILURE() << "a taken suite name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "FLASHPROOF_TEST_IMPLEMENTATION(ForwardingNaive): the suite name is taken by an earlier registration");
  }
  try {
    register_implementation_tests("Another", make);
    ADD_FAILURE() << "a taken implementation name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "FLASHPROOF_TEST_IMPLEMENTATION(Another): an implementation named 'forwarding-naive' is "
                           "registered; give yours another name()");
  }
}

}  // namespace
}  // namespace flashproof::testkit
