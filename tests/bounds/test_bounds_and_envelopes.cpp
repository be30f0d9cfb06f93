// The one group pass for the rigorous bounds and the bound-free envelopes (bounds_and_envelopes,
// bounds/group_bounds.h): together, each is bit for bit what it is alone, with and without a
// sample, forward and backward, for both arithmetic models, and for a group with NaN inputs; without
// the rigorous bounds they are infinite_bounds. And the envelopes keep their own plain-order dot
// products (not the bounds' four-lane ones).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "bounds/envelope.h"
#include "bounds/implementation_bounds.h"
#include "tests/sampled_problems.h"

namespace flashproof {
namespace {

using testing_support::make_problem;
using testing_support::spread_sample;

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t x = 0; x < a.size(); ++x)
    if constexpr (std::is_same_v<T, double>) {
      if (std::bit_cast<std::uint64_t>(a[x]) != std::bit_cast<std::uint64_t>(b[x])) return false;
    } else if (a[x] != b[x]) {
      return false;
    }
  return true;
}

std::string differ(const bounds::ImplementationBounds& a, const bounds::ImplementationBounds& b) {
  std::string out;
  const struct {
    const char* name;
    const std::vector<double>*x, *y;
  } v[] = {{"o", &a.o, &b.o},   {"lse", &a.lse, &b.lse},
           {"dq", &a.dq, &b.dq}, {"dk", &a.dk, &b.dk},
           {"dv", &a.dv, &b.dv}, {"dq_from_d_error", &a.dq_from_d_error, &b.dq_from_d_error},
           {"dk_from_d_error", &a.dk_from_d_error, &b.dk_from_d_error}};
  for (const auto& t : v)
    if (!same_bits(*t.x, *t.y)) out += std::string(t.name) + " ";
  if (!same_bits(a.dq_conditional, b.dq_conditional)) out += "dq_conditional ";
  if (!same_bits(a.dk_conditional, b.dk_conditional)) out += "dk_conditional ";
  return out;
}

std::string differ(const bounds::Envelopes& a, const bounds::Envelopes& b) {
  std::string out;
  const struct {
    const char* name;
    const bounds::Envelope *x, *y;
  } v[] = {{"o", &a.o, &b.o}, {"lse", &a.lse, &b.lse}, {"dq", &a.dq, &b.dq}, {"dk", &a.dk, &b.dk}, {"dv", &a.dv, &b.dv}};
  for (const auto& t : v)
    if (!same_bits(t.x->lo, t.y->lo) || !same_bits(t.x->hi, t.y->hi)) out += std::string(t.name) + " ";
  return out;
}

struct PassCase {
  Problem p;
  const char* dist;
  std::uint64_t seed;
};

std::vector<PassCase> cases() {
  std::vector<PassCase> out;
  std::uint64_t seed = 40;
  for (const Problem& p : testing_support::small_masked_problems()) out.push_back({p, "normal", seed++});
  out.push_back({make_problem(DType::bf16, 1, 4, 2, 21, 30, 64, 5, 2), "large-logits:30", 50});
  out.push_back({make_problem(DType::fp16, 2, 2, 1, 12, 12, 8, -1, 0), "special", 51});  // NaN and inf inputs
  return out;
}

TEST(BoundsAndEnvelopes, TogetherEachIsWhatItIsAlone) {
  for (const PassCase& pc : cases()) {
    const Problem& p = pc.p;
    const Inputs in = generate_inputs(p, parse_distribution(pc.dist).value(), pc.seed);
    const OutputSample samples[] = {spread_sample(p, true, true), spread_sample(p, true, false),
                                    spread_sample(p, false, true)};
    std::vector<double> d_error(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 0x1p-9);
    for (bool backward : {false, true})
      for (ArithmeticModel model : {ArithmeticModel::flash, ArithmeticModel::naive})
        for (int s = -1; s < 3; ++s) {
          const OutputSample* wanted = s < 0 ? nullptr : &samples[s];
          SCOPED_TRACE(p.describe() + " " + pc.dist + (backward ? " backward" : " forward") + " sample " +
                       std::to_string(s));
          const std::vector<double>* e = backward ? &d_error : nullptr;
          const bounds::BoundsAndEnvelopes both = bounds::bounds_and_envelopes(
              p, in,
              {.model = model, .backward = backward, .envelope_slack = 1.0 / 16, .d_error = e, .wanted = wanted});
          EXPECT_EQ(differ(both.rigorous, bounds::implementation_bounds(p, in, model, backward, 0, e,
                                                                        GqaGradientReduction::group_sum, wanted)),
                    "");
          EXPECT_EQ(differ(both.envelopes, bounds::bound_free_envelopes(p, in, backward, 1.0 / 16, wanted)), "");
          const bounds::BoundsAndEnvelopes alone = bounds::bounds_and_envelopes(
              p, in, {.model = model, .backward = backward, .rigorous = false, .envelope_slack = 1.0 / 16,
                      .wanted = wanted});
          EXPECT_EQ(differ(alone.rigorous, bounds::infinite_bounds(p, backward)), "");
          EXPECT_EQ(differ(alone.envelopes, both.envelopes), "");
        }
  }
}

TEST(BoundsAndEnvelopes, WithoutASlackNoEnvelopes) {
  const Problem p = testing_support::small_masked_problems()[0];
  const Inputs in = generate_inputs(p, Distribution{}, 1);
  const bounds::BoundsAndEnvelopes b = bounds::bounds_and_envelopes(p, in, {.backward = true});
  EXPECT_TRUE(b.envelopes.o.lo.empty() && b.envelopes.lse.hi.empty() && b.envelopes.dk.lo.empty());
  EXPECT_FALSE(b.rigorous.dk.empty());
}

// The LSE envelope of an unmasked row from its logits summed in plain order (head_dim 64, where the
// bounds' dot_and_abs sums in four lanes): m - s (M + ln n + 1)(1 + 2^-40) and m + ln n + that.
TEST(BoundsAndEnvelopes, EnvelopesSumTheirDotProductsInPlainOrder) {
  const Problem p = make_problem(DType::fp32, 1, 1, 1, 3, 37, 64);
  const Inputs in = generate_inputs(p, parse_distribution("large-logits:30").value(), 9);
  const double s = 1.0 / 16, scale = static_cast<double>(p.softmax_scale());
  const bounds::Envelopes env = bounds::bound_free_envelopes(p, in, false, s);
  std::vector<double> keys, values, q(64);
  read_kv_rows(in, 0, 0, keys, values);
  for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
    in.q.read_row(0, i, 0, q.data());
    double m = -std::numeric_limits<double>::infinity(), big = 0;
    for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
      double dot = 0, abs_dot = 0;
      for (std::int64_t c = 0; c < 64; ++c) dot += q[c] * keys[j * 64 + c], abs_dot += std::fabs(q[c] * keys[j * 64 + c]);
      m = std::max(m, scale * dot), big = std::max(big, std::fabs(scale) * abs_dot);
    }
    const double log_n = std::log(static_cast<double>(p.seqlen_k));
    const double widen = s * (big + log_n + 1) * (1 + 0x1p-40);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(env.lse.lo[i]), std::bit_cast<std::uint64_t>(m - widen)) << i;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(env.lse.hi[i]), std::bit_cast<std::uint64_t>(m + log_n + widen)) << i;
  }
}

}  // namespace
}  // namespace flashproof

namespace flashproof {
namespace {

// (S1): a split-KV forward's bounds hold its partials' and its combine's roundings on top of the
// dense ones, growing with |LSE|; one split is the dense bound bit for bit; the naive model never splits.
TEST(SplitKvBounds, SplitsWidenTheForwardBoundsByTheCombinesRoundings) {
  for (const char* dist : {"normal", "large-logits:3000"}) {
    const Problem p = make_problem(DType::fp16, 1, 2, 1, 5, 300, 64, -1, -1);
    const Inputs in = generate_inputs(p, *parse_distribution(dist), 12);
    const auto with = [&](ArithmeticModel model, std::int64_t splits) {
      return bounds::bounds_and_envelopes(p, in, {.model = model, .key_splits = splits}).rigorous;
    };
    const bounds::ImplementationBounds dense = with(ArithmeticModel::flash, 1), split = with(ArithmeticModel::flash, 16);
    EXPECT_EQ(differ(dense, with(ArithmeticModel::flash, 1)), "");
    EXPECT_EQ(differ(with(ArithmeticModel::naive, 1), with(ArithmeticModel::naive, 16)), "");
    double widest_lse = 0;
    for (std::size_t x = 0; x < dense.lse.size(); ++x) {
      EXPECT_GT(split.lse[x], dense.lse[x]) << dist << " " << x;
      widest_lse = std::max(widest_lse, split.lse[x] / dense.lse[x]);
    }
    for (std::size_t x = 0; x < dense.o.size(); ++x) EXPECT_GE(split.o[x], dense.o[x]) << dist << " " << x;
    std::cout << dist << ": LSE bound up to " << widest_lse << "x the dense one with 16 splits\n";
  }
}

}  // namespace
}  // namespace flashproof
