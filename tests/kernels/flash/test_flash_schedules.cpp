// The race test's emulated twin (label `emulated`): fa1, fa2 and fa2-deterministic, forward and
// backward, with masks, GQA and ragged lengths, each under the emulator's default schedule and
// under explored ones (kernels/emu/emulator.h: block order, resident blocks, thread interleavings
// between barriers, atomics' order, cp.async in flight until waited for). Every run must be free
// of emulation errors (races, in-flight cp.async reads, barrier divergence), and O, LSE, dK, dV
// bitwise equal to the default schedule's, dQ too where the backward promises it. The explored
// schedules must also reach what they are for: fa2's atomic dQ differs between schedules.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "core/generators.h"
#include "harness/check.h"
#include "tests/kernels/flash/flash_cases.h"
#include "kernels/emu/emulator.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

using flash_tests::first_difference;

const bool kForceEmulator = [] { return setenv("FLASHPROOF_TARGET", "emulated", 1) == 0; }();

constexpr std::uint64_t kSchedules[] = {1, 2, 0x9e3779b97f4a7c15ull};

struct ScheduleCase {
  std::string impl, label;
  Problem problem;
};

std::vector<ScheduleCase> schedule_cases() {
  std::vector<ScheduleCase> out;
  struct Shape {
    const char* name;
    std::int64_t sq, sk, d, hq, hkv, left, right;
  };
  const Shape shapes[] = {
      {"none_d64_gqa", 40, 300, 64, 4, 2, -1, -1},  // three key blocks: atomics' order matters
      {"causal_d128", 129, 65, 128, 1, 1, -1, 0},
      {"local_d32_mqa", 100, 90, 32, 3, 1, 40, 7},
  };
  for (const char* impl : {"fa2", "fa2-deterministic", "fa1"})
    for (const Shape& s : shapes) {
      Problem p;
      p.batch = 1;
      p.seqlen_q = s.sq;
      p.seqlen_k = s.sk;
      p.head_dim = s.d;
      p.heads_q = s.hq;
      p.heads_kv = s.hkv;
      p.window_left = s.left;
      p.window_right = s.right;
      std::string label = std::string(impl) + "_" + s.name;
      for (char& ch : label)
        if (ch == '-') ch = '_';
      out.push_back({impl, label, p});
    }
  return out;
}

class FlashSchedules : public ::testing::TestWithParam<ScheduleCase> {};

TEST_P(FlashSchedules, EveryScheduleIsRaceFreeAndBitwiseEqual) {
  const ScheduleCase& sc = GetParam();
  AttentionImpl* impl = find_implementation(sc.impl);
  ASSERT_NE(impl, nullptr);
  if (std::string why = impl->unsupported_reason(sc.problem, true); !why.empty()) GTEST_SKIP() << why;
  const Inputs in = generate_inputs(sc.problem, Distribution{}, 20261124);
  const Outputs first = run_implementation(*impl, sc.problem, true, in);
  for (const std::uint64_t schedule : kSchedules) {
    const emu::ScopedSchedule explored(schedule);
    Outputs again;
    ASSERT_NO_THROW(again = run_implementation(*impl, sc.problem, true, in)) << "schedule " << schedule;
    for (const auto& [name, a, b] : {std::tuple{"O", &again.o, &first.o}, {"LSE", &again.lse, &first.lse},
                                     {"dK", &again.dk, &first.dk}, {"dV", &again.dv, &first.dv}}) {
      const std::string d = first_difference(name, *a, *b);
      EXPECT_TRUE(d.empty()) << sc.label << ", schedule " << schedule << ": " << d;
    }
    if (impl->bitwise_reproducible_backward()) {
      const std::string d = first_difference("dQ", again.dq, first.dq);
      EXPECT_TRUE(d.empty()) << sc.label << ", schedule " << schedule << ": " << d;
    }
  }
}

// What the exploration is for: fa2 adds each key block's dQ with atomics, so the order they land in
// (three or more per element: two fp32 additions into 0 commute)
// must change the rounded sums under some
// explored schedule. If it did not, the comparisons above could not see an order-dependent result.
TEST(FlashSchedulesReach, Fa2AtomicDqDependsOnTheSchedule) {
  AttentionImpl* impl = find_implementation("fa2");
  ASSERT_NE(impl, nullptr);
  const Problem p = schedule_cases()[0].problem;
  const Inputs in = generate_inputs(p, Distribution{}, 20261124);
  std::vector<Outputs> runs;
  for (const std::uint64_t schedule : kSchedules) {
    const emu::ScopedSchedule explored(schedule);
    runs.push_back(run_implementation(*impl, p, true, in));
  }
  int differing = 0;
  for (std::size_t i = 1; i < runs.size(); ++i) differing += !first_difference("dQ", runs[i].dq, runs[0].dq).empty();
  EXPECT_GT(differing, 0) << "every explored schedule gave fa2 the same dQ bits";
  // ... while each schedule is reproducible: the same seed, the same bits.
  const emu::ScopedSchedule again(kSchedules[0]);
  EXPECT_EQ(first_difference("dQ", run_implementation(*impl, p, true, in).dq, runs[0].dq), "");
}

INSTANTIATE_TEST_SUITE_P(Emulated, FlashSchedules, ::testing::ValuesIn(schedule_cases()),
                         [](const auto& info) { return info.param.label; });

}  // namespace
}  // namespace flashproof
