// The second tier (harness/baseline_rule.h) on one tensor: a not-judged tensor is passed or failed
// by k times the dtype computation's error plus the floor, the given LSE's share widens it, and a
// tolerance that reaches the exact tensor's size passes nothing (the tensor stays not judged) while
// still failing an error beyond it. A judged tensor is left alone. And the first tier's vacuity
// (harness/verdict.h) on hand-made tensors: against a fraction of the summands' size, and an
// infinity admitted under a vacuous bound.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/baseline_rule.h"
#include "harness/verdict.h"

namespace flashproof {
namespace {

// A [1, 4, 1, 1] bf16 tensor of the given values.
HostTensor tensor_of(std::initializer_list<double> values) {
  HostTensor t(DType::bf16, {1, static_cast<std::int64_t>(values.size()), 1, 1});
  std::int64_t i = 0;
  for (double v : values) t.set(0, i++, 0, 0, v);
  return t;
}

reference::CertifiedTensor exact(std::initializer_list<double> values) {
  reference::CertifiedTensor r;
  r.shape = {1, static_cast<std::int64_t>(values.size()), 1, 1};
  r.value = values;
  r.bound.assign(values.size(), 0);
  r.checked.assign(values.size(), 1);
  r.magnitude.assign(values.size(), 0);
  for (std::size_t x = 0; x < r.value.size(); ++x) r.magnitude[x] = std::fabs(r.value[x]);
  return r;
}

bounds::Envelope wide(std::size_t n) { return {std::vector<double>(n, -100), std::vector<double>(n, 100)}; }

TensorCheck not_judged(double max_abs) {
  TensorCheck t;
  t.name = "dV";
  t.verdict = Verdict::not_judged;
  t.errors.max_abs = max_abs;
  t.floor = 1e-3;
  return t;
}

TEST(BaselineRule, PassesWithinKTimesTheDtypeErrorAndFailsBeyond) {
  const reference::CertifiedTensor ref = exact({1, -2, 4, 0.5});
  const HostTensor dtype_out = tensor_of({1.0625, -2, 4, 0.5});  // its error: 0.0625
  TensorCheck within = not_judged(0.18);                          // below 3 x 0.0625 + 0.001
  apply_baseline_rule(within, dtype_out, ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(within.verdict, Verdict::pass_baseline_rule);
  EXPECT_TRUE(within.baseline_rule.applied);
  EXPECT_DOUBLE_EQ(within.baseline_rule.tolerance, 3 * 0.0625 + 1e-3);
  TensorCheck beyond = not_judged(0.2);
  apply_baseline_rule(beyond, dtype_out, ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(beyond.verdict, Verdict::fail_baseline_rule);
  ASSERT_EQ(beyond.reasons.size(), 1u);
  EXPECT_NE(beyond.reasons[0].find("second tier"), std::string::npos);
  // The naive baseline's error, where larger (another order of the same computation), sets it.
  TensorCheck other_order = not_judged(0.2);
  other_order.baseline_errors.max_abs = 0.07;
  apply_baseline_rule(other_order, dtype_out, ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(other_order.verdict, Verdict::pass_baseline_rule);
  EXPECT_DOUBLE_EQ(other_order.baseline_rule.tolerance, 3 * 0.07 + 1e-3);
  // The given LSE's share widens the tolerance: the same error passes.
  TensorCheck widened = not_judged(0.2);
  apply_baseline_rule(widened, dtype_out, ref, wide(4), CheckOptions{}, 3, 0.01);
  EXPECT_EQ(widened.verdict, Verdict::pass_baseline_rule);
}

TEST(BaselineRule, AVacuousToleranceJudgesNothingButStillFailsBeyondIt) {
  const reference::CertifiedTensor ref = exact({1, -2, 4, 0.5});
  const HostTensor dtype_out = tensor_of({2, -1, 6, 1.5});  // its error 2: 3 x 2 > |exact| 4
  TensorCheck within = not_judged(3);
  apply_baseline_rule(within, dtype_out, ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(within.verdict, Verdict::not_judged);
  EXPECT_TRUE(within.baseline_rule.vacuous);
  TensorCheck beyond = not_judged(7);
  apply_baseline_rule(beyond, dtype_out, ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(beyond.verdict, Verdict::fail_baseline_rule);
  // Every exact value 0: measured against 1/16 of the narrowest envelope width (200 here).
  const reference::CertifiedTensor zero = exact({0, 0, 0, 0});
  TensorCheck small = not_judged(1);
  apply_baseline_rule(small, tensor_of({0.5, 0, 0, 0}), zero, wide(4), CheckOptions{}, 3);  // tolerance 1.501 < 12.5
  EXPECT_EQ(small.verdict, Verdict::pass_baseline_rule);
  TensorCheck large = not_judged(1);
  apply_baseline_rule(large, tensor_of({8, 0, 0, 0}), zero, wide(4), CheckOptions{}, 3);  // tolerance 24 >= 12.5
  EXPECT_EQ(large.verdict, Verdict::not_judged);
}

TEST(BaselineRule, LeavesJudgedTensorsAndNonFiniteBaselinesAlone) {
  const reference::CertifiedTensor ref = exact({1, -2, 4, 0.5});
  TensorCheck judged = not_judged(5);
  judged.verdict = Verdict::pass;
  apply_baseline_rule(judged, tensor_of({1, -2, 4, 0.5}), ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(judged.verdict, Verdict::pass);
  EXPECT_FALSE(judged.baseline_rule.applied);
  TensorCheck t = not_judged(0.1);
  apply_baseline_rule(t, tensor_of({INFINITY, -2, 4, 0.5}), ref, wide(4), CheckOptions{}, 3);
  EXPECT_EQ(t.verdict, Verdict::not_judged);
  EXPECT_FALSE(t.baseline_rule.applied);
  EXPECT_EQ(t.baseline_rule.dtype_baseline_not_finite, 1);
}

// First tier: a bound that reaches 1/16 of the summands' size around an exact 0 judges nothing.
// (Before, against the whole summands' size, 0.5 x summands judged: +-0.4 passed where any sum of
// these summands lies within +-1.)
TEST(FirstTierVacuity, ABoundOfTheSummandsSizeAroundAnExactZeroJudgesNothing) {
  reference::CertifiedTensor ref = exact({0, 0, 0, 0});
  ref.magnitude.assign(4, 1.0);
  const bounds::Envelope env = wide(4);
  const HostTensor actual = tensor_of({0.40625, -0.40625, 0, 0});
  auto judged_with = [&](double bound, const HostTensor& a) {
    const std::vector<double> rigorous(4, bound);
    return check_tensor("dQ", a, tensor_of({0, 0, 0, 0}), ref, TensorJudges{rigorous, nullptr, &env, true}, 3,
                        false, CheckOptions{});
  };
  const TensorCheck loose = judged_with(0.5, actual);
  EXPECT_EQ(loose.verdict, Verdict::not_judged);
  EXPECT_EQ(loose.vacuous, 4);
  const TensorCheck tight = judged_with(0.05, tensor_of({0.03125, 0, 0, 0}));
  EXPECT_EQ(tight.verdict, Verdict::pass);
  EXPECT_EQ(tight.vacuous, 0);
  EXPECT_EQ(judged_with(0.05, actual).verdict, Verdict::fail);
  CheckOptions whole_summands;  // the rule before: 0.5 judged, and +-0.4 passed
  whole_summands.vacuous_magnitude_fraction = 1;
  const std::vector<double> rigorous(4, 0.5);
  EXPECT_EQ(check_tensor("dQ", actual, tensor_of({0, 0, 0, 0}), ref, TensorJudges{rigorous, nullptr, &env, true}, 3,
                         false, whole_summands).verdict,
            Verdict::pass);
}

// An infinity where the exact value is finite, admitted because its bound reaches past bf16's
// range: with a vacuous bound it is not judged by the first tier (before: pass), and the second tier,
// whose dtype computation is finite there, fails it.
TEST(FirstTierVacuity, AnInfinityAdmittedUnderAVacuousBoundIsNotAPass) {
  const reference::CertifiedTensor ref = exact({1, -2, 4, 0.5});
  const bounds::Envelope env = wide(4);
  const std::vector<double> rigorous = {0.01, 0.01, 1e39, 0.01};
  const HostTensor actual = tensor_of({1, -2, INFINITY, 0.5});
  TensorCheck t = check_tensor("O", actual, tensor_of({1, -2, 4, 0.5}), ref, TensorJudges{rigorous, nullptr, &env, true},
                               3, false, CheckOptions{});
  EXPECT_EQ(t.inf_within_bound, 1);
  EXPECT_EQ(t.inf_within_vacuous_bound, 1);
  EXPECT_EQ(t.verdict, Verdict::not_judged);
  apply_baseline_rule(t, tensor_of({1, -2, 4, 0.5}), ref, env, CheckOptions{}, 3);
  EXPECT_EQ(t.verdict, Verdict::fail_baseline_rule);
  // Where the bound judges (|r| near the range's edge), the admitted inf stays a pass.
  const reference::CertifiedTensor edge = exact({1, -2, 3.3e38, 0.5});
  const std::vector<double> tight = {0.01, 0.01, 1e37, 0.01};
  const TensorCheck admitted = check_tensor("O", actual, tensor_of({1, -2, 4, 0.5}), edge,
                                            TensorJudges{tight, nullptr, &env, true}, 3, false, CheckOptions{});
  EXPECT_EQ(admitted.inf_within_bound, 1);
  EXPECT_EQ(admitted.inf_within_vacuous_bound, 0);
  EXPECT_EQ(admitted.verdict, Verdict::pass);
}

}  // namespace
}  // namespace flashproof
