// The FA2 kernels on a GPU (label `gpu`): the emulated tests' matrix and edge cases, run by the
// nvcc build of the same kernel source. Skipped where no GPU (sm_80+) is usable.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/fa2/api.h"
#include "tests/kernels/flash/flash_cases.h"

namespace flashproof {
namespace {

using namespace flash_tests;

const bool kForceGpu = [] { return setenv("FLASHPROOF_TARGET", "gpu", 1) == 0; }();

class Fa2Gpu : public ::testing::TestWithParam<FlashCase> {};

TEST_P(Fa2Gpu, ForwardAndBackwardMeetTheBaselineRule) {
  if (!kernels::flash_gpu_usable()) GTEST_SKIP() << "no usable GPU (sm_80+)";
  if (const std::string why = bucket_not_built(GetParam()); !why.empty()) GTEST_SKIP() << why;
  expect_case_passes(GetParam(), "gpu");
}

INSTANTIATE_TEST_SUITE_P(Matrix, Fa2Gpu, ::testing::ValuesIn(matrix_cases("fa2")),
                         [](const auto& info) { return info.param.label; });
INSTANTIATE_TEST_SUITE_P(Edges, Fa2Gpu, ::testing::ValuesIn(edge_cases("fa2", "fa2-deterministic")),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace flashproof
