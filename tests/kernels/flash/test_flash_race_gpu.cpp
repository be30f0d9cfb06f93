// The GPU race test (label `gpu`; docs/gpu-check.md): a wide batch (the emulator's fiber scheduler hides races
// that only many concurrent blocks show) run forward once and backward FLASHPROOF_RACE_REPEATS
// times (default 100) on the GPU; O, LSE, dK and dV must come out bitwise equal every time, and dQ
// too where the backward promises it (fa1, fa2-deterministic; fa2 adds dQ with atomics in a
// varying order). A second forward is compared as well. Skipped where no GPU is usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "harness/check.h"
#include "tests/kernels/flash/flash_cases.h"
#include "kernels/flash/api.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

using flash_tests::first_difference;

const bool kForceGpu = [] { return setenv("FLASHPROOF_TARGET", "gpu", 1) == 0; }();

struct RaceCase {
  std::string impl;
  Problem problem;
  std::string label;
};

int repeats() {
  const char* v = std::getenv("FLASHPROOF_RACE_REPEATS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 100;
}

class FlashRace : public ::testing::TestWithParam<RaceCase> {};

TEST_P(FlashRace, RepeatedRunsAreBitwiseEqual) {
  if (!kernels::flash_gpu_usable()) GTEST_SKIP() << "no usable GPU (sm_80+)";
  const RaceCase& rc = GetParam();
  AttentionImpl* impl = find_implementation(rc.impl);
  ASSERT_NE(impl, nullptr);
  if (std::string why = impl->unsupported_reason(rc.problem, true); !why.empty()) GTEST_SKIP() << why;
  const Inputs in = generate_inputs(rc.problem, Distribution{}, 20261121);
  const Outputs first = run_implementation(*impl, rc.problem, true, in);
  const int n = repeats();
  for (int r = 0; r < n; ++r) {
    const Outputs again = run_implementation(*impl, rc.problem, true, in);
    for (const auto& [name, a, b] : {std::tuple{"O", &again.o, &first.o}, {"LSE", &again.lse, &first.lse},
                                     {"dK", &again.dk, &first.dk}, {"dV", &again.dv, &first.dv}}) {
      const std::string d = first_difference(name, *a, *b);
      ASSERT_TRUE(d.empty()) << rc.label << ", run " << r + 2 << " of " << n + 1 << ": " << d;
    }
    if (impl->bitwise_reproducible_backward()) {
      const std::string d = first_difference("dQ", again.dq, first.dq);
      ASSERT_TRUE(d.empty()) << rc.label << ", run " << r + 2 << ": " << d;
    }
  }
}

std::vector<RaceCase> race_cases() {
  std::vector<RaceCase> out;
  for (const char* impl : {"fa2", "fa2-deterministic", "fa1"})
    for (const std::int64_t d : {64, 128})
      for (const bool causal : {false, true}) {
        Problem p;
        p.batch = 64;  // at least 60: many more blocks than multiprocessors
        p.heads_q = 4;
        p.heads_kv = 2;
        p.seqlen_q = 257;
        p.seqlen_k = 300;
        p.head_dim = d;
        if (causal) p.window_left = -1, p.window_right = 0;
        std::string label = std::string(impl) + "_d" + std::to_string(d) + (causal ? "_causal" : "_none");
        for (char& ch : label)
          if (ch == '-') ch = '_';
        out.push_back({impl, p, label});
      }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Batch64, FlashRace, ::testing::ValuesIn(race_cases()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace flashproof
