// The helper's tests for a broken implementation (the softmax scale dropped): not a ctest test by
// itself; test_implementation_tests runs it and requires its tests to fail.
#include "testing/implementation_tests.h"
#include "tests/testing/forwarding_attention.h"

namespace {
flashproof::testkit::SuiteOptions small_runs() {
  flashproof::testkit::SuiteOptions o;
  o.property_cases = 4;
  o.campaign_cases = 3;
  o.campaign_max_seqlen = 64;
  o.campaign_max_work = 1 << 16;
  return o;
}
}  // namespace

FLASHPROOF_TEST_IMPLEMENTATION(ScaleDroppingNaive,
                               [] { return std::make_unique<flashproof::testkit::ForwardingAttention>("scale-dropping-naive", true); },
                               small_runs());
