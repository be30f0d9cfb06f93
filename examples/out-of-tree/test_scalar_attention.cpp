// The whole flashproof verdict on ScalarAttention as ctest tests: every applicable property and a
// short fuzz campaign.
#include <flashproof/testing/implementation_tests.h>

#include <memory>

#include "scalar_attention.h"

namespace {
// Small runs: this project is built and tested in flashproof's own CI.
flashproof::testkit::SuiteOptions small_runs() {
  flashproof::testkit::SuiteOptions o;
  o.property_cases = 10;
  o.campaign_cases = 12;
  o.seed = 7;
  o.dtypes = {flashproof::DType::fp16, flashproof::DType::bf16};
  o.campaign_max_seqlen = 96;
  o.campaign_max_work = 1 << 16;
  return o;
}
}  // namespace

FLASHPROOF_TEST_IMPLEMENTATION(ScalarAttention, [] { return std::make_unique<ScalarAttention>(); }, small_runs());
