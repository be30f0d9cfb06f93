// The property suite (label `property`; `slow` runs ten times more cases): every property of
// properties/properties.h over every registered implementation it applies to, on the target each
// runs on here (flash kernels: the GPU when usable, else the emulator). RC_PARAMS sets the case
// count (ctest passes max_success); a failure prints the minimal case and the
// RC_PARAMS="reproduce=..." string that re-runs it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/registry.h"
#include "properties/runner.h"

namespace flashproof::properties {
namespace {

struct Pairing {
  const Property* property;
  std::string impl;
};

std::vector<Pairing> pairings() {
  std::vector<Pairing> out;
  for (const Property& p : all_properties())
    for (AttentionImpl* impl : implementations())
      if (p.applies(*impl)) out.push_back({&p, impl->name()});
  return out;
}

void PrintTo(const Pairing& x, std::ostream* os) { *os << x.property->name << " on " << x.impl; }

std::string test_name(const Pairing& x) {
  std::string s = std::string(x.property->name) + "__" + x.impl;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

class Properties : public ::testing::TestWithParam<Pairing> {};

TEST_P(Properties, HoldOnGeneratedCases) {
  const Pairing& x = GetParam();
  AttentionImpl* impl = find_implementation(x.impl);
  ASSERT_NE(impl, nullptr);
  const PropertyRun run = run_property(*x.property, *impl, test_name(x));
  std::cout << x.property->name << " on " << x.impl << " (" << impl->where() << "): " << run.cases << " cases\n"
            << run.message << "\n";
  EXPECT_GT(run.cases, 0) << "a property that ran zero cases fails";
  EXPECT_TRUE(run.passed) << x.property->name << " (" << x.property->what << ") fails on " << x.impl << ": " << run.why
                          << "\n" << run.message;
}

INSTANTIATE_TEST_SUITE_P(All, Properties, ::testing::ValuesIn(pairings()),
                         [](const auto& info) { return test_name(info.param); });

}  // namespace
}  // namespace flashproof::properties
