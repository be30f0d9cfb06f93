// The FA1 kernels on a GPU (label `gpu`): the emulated tests' matrix and edge cases, and FA1
// against FA2, run by the nvcc build of the same kernel source. Skipped where no GPU (sm_80+) is
// usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernels/flash/api.h"
#include "tests/kernels/fa1/fa1_agreement.h"
#include "tests/kernels/flash/flash_cases.h"

namespace flashproof {
namespace {

using namespace flash_tests;

const bool kForceGpu = [] { return setenv("FLASHPROOF_TARGET", "gpu", 1) == 0; }();

class Fa1Gpu : public ::testing::TestWithParam<FlashCase> {};

TEST_P(Fa1Gpu, MeetsTheBaselineRuleAndAgreesWithFa2) {
  if (!kernels::flash_gpu_usable()) GTEST_SKIP() << "no usable GPU (sm_80+)";
  if (const std::string why = fa1_or_fa2_not_built(GetParam()); !why.empty()) GTEST_SKIP() << why;
  expect_fa1_case_passes_and_matches_fa2(GetParam(), "gpu");
}

INSTANTIATE_TEST_SUITE_P(Matrix, Fa1Gpu, ::testing::ValuesIn(matrix_cases("fa1")),
                         [](const auto& info) { return info.param.label; });
INSTANTIATE_TEST_SUITE_P(Edges, Fa1Gpu, ::testing::ValuesIn(edge_cases("fa1", "fa1")),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace flashproof
