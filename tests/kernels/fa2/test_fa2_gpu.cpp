// The FA2 kernels on a GPU (label `gpu`): the emulated tests' matrix and edge cases, run by the
// nvcc build of the same kernel source. Skipped where no GPU (sm_80+) is usable.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/fa2/api.h"
#include "tests/kernels/fa2/fa2_cases.h"

namespace flashproof {
namespace {

using namespace fa2_tests;

const bool kForceGpu = [] { return setenv("FLASHPROOF_TARGET", "gpu", 1) == 0; }();

class Fa2Gpu : public ::testing::TestWithParam<Fa2Case> {};

TEST_P(Fa2Gpu, ForwardAndBackwardMeetTheBaselineRule) {
  if (!kernels::flash_gpu_usable()) GTEST_SKIP() << "no usable GPU (sm_80+)";
  expect_case_passes(GetParam(), "gpu");
}

INSTANTIATE_TEST_SUITE_P(Matrix, Fa2Gpu, ::testing::ValuesIn(matrix_cases()),
                         [](const auto& info) { return info.param.label; });
INSTANTIATE_TEST_SUITE_P(Edges, Fa2Gpu, ::testing::ValuesIn(edge_cases()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace flashproof
