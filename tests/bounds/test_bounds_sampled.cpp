// The rigorous bounds under a sample (implementation_bounds' `wanted`): every element of a wanted
// row or column bit for bit that of the full computation, for both arithmetic models, forward and
// backward, with and without D's error, for either GQA reduction; every other element +inf (the
// bounds) or 0 (the shares of D's error, the conditional flags).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bounds/implementation_bounds.h"
#include "tests/sampled_problems.h"

namespace flashproof {
namespace {

constexpr double kInf = INFINITY;

using testing_support::make_problem;
using testing_support::spread_sample;

struct BoundsCase {
  Problem p;
  const char* dist;
  std::uint64_t seed;
};

std::vector<BoundsCase> cases() {
  Problem overflow = make_problem(DType::fp16, 1, 2, 1, 12, 12, 64, 2, 1);
  overflow.scale = 1e-9f;  // moderate logits while dO . v passes 65504 (dq_conditional, dk_conditional)
  const std::vector<Problem> ps = testing_support::small_masked_problems();
  return {
      {ps[0], "normal", 71},
      {ps[1], "normal", 72},
      {ps[2], "large-logits:30", 73},  // larger logits
      {ps[3], "normal", 74},
      {overflow, "scaled:16384", 75},  // rows of at most four keys whose dP and dS may overflow fp16
  };
}

// Per element of a [b, sq, hq, d], [b, hq, sq] or [b, sk, hkv, d] vector: is it in the sample?
std::vector<bool> q_elements(const Problem& p, const OutputSample& s) {
  std::vector<bool> w;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t c = 0; c < p.head_dim; ++c) w.push_back(s.row((b * p.heads_q + h) * p.seqlen_q + i));
  return w;
}
std::vector<bool> lse_elements(const OutputSample& s) { return {s.rows.begin(), s.rows.end()}; }
std::vector<bool> kv_elements(const Problem& p, const OutputSample& s) {
  std::vector<bool> w;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t j = 0; j < p.seqlen_k; ++j)
      for (std::int64_t hk = 0; hk < p.heads_kv; ++hk)
        for (std::int64_t c = 0; c < p.head_dim; ++c) w.push_back(s.col((b * p.heads_kv + hk) * p.seqlen_k + j));
  return w;
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }
std::uint64_t bits(std::uint8_t x) { return x; }

// `sampled` against `full`: the same bits where wanted, `outside` elsewhere. The first few
// differences, empty when none.
template <class T>
std::string differences(const char* name, const std::vector<T>& full, const std::vector<T>& sampled,
                        const std::vector<bool>& wanted, T outside) {
  if (full.size() != wanted.size() || sampled.size() != wanted.size())
    return std::string(name) + ": sizes " + std::to_string(full.size()) + ", " + std::to_string(sampled.size()) +
           " for " + std::to_string(wanted.size()) + " elements\n";
  std::ostringstream out;
  int shown = 0;
  for (std::size_t x = 0; x < wanted.size(); ++x) {
    const T expected = wanted[x] ? full[x] : outside;
    if (bits(sampled[x]) != bits(expected) && shown++ < 4)
      out << name << "[" << x << "] " << (wanted[x] ? "wanted" : "not wanted") << ": " << +sampled[x]
          << " instead of " << +expected << "\n";
  }
  return out.str();
}

std::string compare(const Problem& p, const OutputSample& s, const bounds::ImplementationBounds& full,
                    const bounds::ImplementationBounds& sampled) {
  const std::vector<bool> q = q_elements(p, s), lse = lse_elements(s), kv = kv_elements(p, s);
  std::string out = differences("o", full.o, sampled.o, q, kInf) + differences("lse", full.lse, sampled.lse, lse, kInf);
  if (full.dq.empty()) return out + (sampled.dq.empty() ? "" : "dq: present without backward\n");
  return out + differences("dq", full.dq, sampled.dq, q, kInf) + differences("dk", full.dk, sampled.dk, kv, kInf) +
         differences("dv", full.dv, sampled.dv, kv, kInf) +
         differences("dq_from_d_error", full.dq_from_d_error, sampled.dq_from_d_error, q, 0.0) +
         differences("dk_from_d_error", full.dk_from_d_error, sampled.dk_from_d_error, kv, 0.0) +
         differences("dq_conditional", full.dq_conditional, sampled.dq_conditional, q, std::uint8_t{0}) +
         differences("dk_conditional", full.dk_conditional, sampled.dk_conditional, kv, std::uint8_t{0});
}

// How many elements hold a finite, nonzero value: the comparison is meant to see real bounds.
std::int64_t finite_nonzero(const std::vector<double>& v) {
  return std::count_if(v.begin(), v.end(), [](double x) { return std::isfinite(x) && x != 0; });
}

// Every case, model and sample kind, with `backward`, a d_error when `with_d_error`, and `gqa`.
void expect_sampled_equals_full(bool backward, bool with_d_error, GqaGradientReduction gqa) {
  for (const BoundsCase& bc : cases()) {
    const Problem& p = bc.p;
    const Inputs in = generate_inputs(p, parse_distribution(bc.dist).value(), bc.seed);
    std::vector<double> d_error(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q));
    for (std::size_t x = 0; x < d_error.size(); ++x) d_error[x] = 0x1p-10 * static_cast<double>(1 + x % 3);
    const std::vector<double>* e = with_d_error ? &d_error : nullptr;
    for (ArithmeticModel model : {ArithmeticModel::flash, ArithmeticModel::naive}) {
      const bounds::ImplementationBounds full = bounds::implementation_bounds(p, in, model, backward, 0, e, gqa);
      EXPECT_GT(finite_nonzero(full.o), 0) << p.describe();
      if (backward) {
        EXPECT_GT(finite_nonzero(full.dq) * finite_nonzero(full.dk) * finite_nonzero(full.dv), 0) << p.describe();
        if (with_d_error) {
          EXPECT_GT(finite_nonzero(full.dq_from_d_error) * finite_nonzero(full.dk_from_d_error), 0);
        }
      }
      const struct {
        const char* name;
        bool rows, cols;
      } kinds[] = {{"rows and columns", true, true}, {"rows, no columns", true, false}, {"columns only", false, true}};
      for (const auto& kind : kinds) {
        SCOPED_TRACE(p.describe() + " " + bc.dist + (model == ArithmeticModel::flash ? ", flash, " : ", naive, ") +
                     kind.name);
        const OutputSample s = spread_sample(p, kind.rows, kind.cols);
        EXPECT_EQ(compare(p, s, full, bounds::implementation_bounds(p, in, model, backward, 0, e, gqa, &s)), "");
      }
    }
  }
}

TEST(BoundsSampled, ForwardBoundsOfWantedRowsAreThoseOfTheFullRun) {
  expect_sampled_equals_full(false, false, GqaGradientReduction::group_sum);
}

TEST(BoundsSampled, BackwardBoundsOfWantedRowsAndColumnsAreThoseOfTheFullRun) {
  expect_sampled_equals_full(true, false, GqaGradientReduction::group_sum);
}

TEST(BoundsSampled, BackwardWithDErrorIsThatOfTheFullRun) {
  expect_sampled_equals_full(true, true, GqaGradientReduction::group_sum);
}

TEST(BoundsSampled, PerHeadRoundedGqaIsThatOfTheFullRun) {
  expect_sampled_equals_full(true, false, GqaGradientReduction::per_head_rounded);
  expect_sampled_equals_full(true, true, GqaGradientReduction::per_head_rounded);
}

// The overflow case is meant to reach the conditional flags, so that their comparison means
// something.
TEST(BoundsSampled, TheOverflowCaseSetsConditionalFlags) {
  const BoundsCase bc = cases().back();
  const Inputs in = generate_inputs(bc.p, parse_distribution(bc.dist).value(), bc.seed);
  for (ArithmeticModel model : {ArithmeticModel::flash, ArithmeticModel::naive}) {
    const bounds::ImplementationBounds b = bounds::implementation_bounds(bc.p, in, model, true);
    EXPECT_GT(std::count(b.dq_conditional.begin(), b.dq_conditional.end(), 1), 0);
    EXPECT_GT(std::count(b.dk_conditional.begin(), b.dk_conditional.end(), 1), 0);
  }
}

TEST(BoundsSampled, ASampleOfAnotherShapeIsRejected) {
  const Problem p = cases()[0].p;
  const Inputs in = generate_inputs(p, Distribution{}, 1);
  OutputSample s = spread_sample(p, true, true);
  s.rows.push_back(1);
  EXPECT_THROW(bounds::implementation_bounds(p, in, ArithmeticModel::flash, false, 0, nullptr,
                                             GqaGradientReduction::group_sum, &s),
               std::invalid_argument);
}

}  // namespace
}  // namespace flashproof
