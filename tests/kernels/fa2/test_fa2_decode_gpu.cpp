// The FA2 decode path on a GPU (label `gpu`; docs/fa2.md "Decoding"): the emulated test's cases
// (decode_cases.h) run by the nvcc build of the same kernels, against the same double computation
// and tolerances, and the split sweep. Skipped where no GPU (sm_80+) is usable.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/fa2/api.h"
#include "kernels/registry.h"
#include "tests/kernels/fa2/decode_cases.h"

namespace flashproof {
namespace {

using namespace decode_tests;

const bool kForceGpu = [] { return setenv("FLASHPROOF_TARGET", "gpu", 1) == 0; }();

class Fa2DecodeGpu : public ::testing::TestWithParam<DecodeCase> {};

TEST_P(Fa2DecodeGpu, MatchesTheLogicalAttention) {
  if (!kernels::flash_gpu_usable()) GTEST_SKIP() << "no usable GPU (sm_80+)";
  AttentionImpl* fa2 = find_implementation("fa2");
  ASSERT_NE(fa2, nullptr);
  const Problem p = problem_of(GetParam());
  ASSERT_EQ(fa2->unsupported_reason(p, false), "");
  const DecodeInputs in = decode_inputs(p, GetParam().seed);
  const Comparison c = compare(p, run_decode(*fa2, p, in), reference(p, in));
  EXPECT_EQ(c.bad, 0) << c.first << " (worst O error " << c.worst_o_ratio << " x tolerance)";
}

std::vector<DecodeCase> gpu_cases() {
  std::vector<DecodeCase> v = decode_cases();
  for (std::int64_t splits : {1, 2, 3, 4, 6, 0}) {
    DecodeCase c = sweep_case(splits);
    c.label = "sweep_splits_" + std::to_string(splits);
    v.push_back(c);
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, Fa2DecodeGpu, ::testing::ValuesIn(gpu_cases()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace flashproof
