// A failure names its element: an implementation that moves one known element past its
// rigorous bound fails with a reason, a record (rigorous_bound.worst_element) and a table that name
// exactly that element, with its exact and returned values, the implementation's bound there (the
// one rigorous_bounds gives) and the reference's; moved within its bound, no element is named as
// failing. A NaN or an inf where the exact value is finite names the first such element.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/check_render.h"
#include "tests/harness/broken_impl.h"
#include "tests/harness/record_tensor.h"

namespace flashproof {
namespace {

using test_impls::tensor;

// The element the broken implementation plants: tensor (0 O, 1 LSE, 2 dQ, 3 dK, 4 dV), its
// coordinates and the value written there (a second one, optional, for "the first" of two).
struct Plant {
  int tensor = -1;
  std::array<std::int64_t, 4> at{0, 0, 0, 0};
  double value = 0;
};
std::vector<Plant> g_plants;

void plant(int which, HostTensor& t) {
  for (const Plant& p : g_plants)
    if (p.tensor == which) t.set(p.at[0], p.at[1], p.at[2], p.at[3], p.value);
}

// The naive implementation with g_plants written over its outputs.
const char* planted() {
  test_impls::register_broken(
      "planted-element", "naive", ArithmeticModel::naive,
      [](const Problem&, ForwardArgs& a) { plant(0, a.o), plant(1, a.lse); },
      [](const Problem&, BackwardArgs& a) { plant(2, a.dq), plant(3, a.dk), plant(4, a.dv); });
  return "planted-element";
}

Case small_case(bool backward) {
  Case c;
  c.impl = planted();
  c.problem.dtype = DType::fp16;
  c.problem.batch = 2;
  c.problem.heads_q = 2;
  c.problem.heads_kv = 1;
  c.problem.seqlen_q = 5;
  c.problem.seqlen_k = 7;
  c.problem.head_dim = 16;
  c.seed = 11;
  c.backward = backward;
  return c;
}

// The dtype value next to v, upwards (dir > 0) or downwards.
double step(DType t, double v, int dir) {
  if (v == 0) return from_bits(t, dir > 0 ? 1u : (t == DType::fp32 ? 0x80000001u : 0x8001u));
  const std::uint32_t b = to_bits(t, v);
  return from_bits(t, (v > 0) == (dir > 0) ? b + 1 : b - 1);
}

// Linear index of `at` in a row-major tensor of shape `s`.
std::size_t linear(const Shape& s, const std::array<std::int64_t, 4>& at) {
  return static_cast<std::size_t>(((at[0] * s[1] + at[1]) * s[2] + at[2]) * s[3] + at[3]);
}

struct Exact {
  double r, ref_bound, bound;
};
// The reference and the model's bound at one element, as the check will see them.
Exact exact_at(const Case& c, int which, std::size_t x) {
  const CaseContext ctx = prepare_case(c);
  const reference::CertifiedTensor* ref[] = {&ctx.reference.forward.o, &ctx.reference.forward.lse,
                                             c.backward ? &ctx.reference.backward->dq : nullptr,
                                             c.backward ? &ctx.reference.backward->dk : nullptr,
                                             c.backward ? &ctx.reference.backward->dv : nullptr};
  const bounds::ImplementationBounds b = rigorous_bounds(c, ArithmeticModel::naive);
  const std::vector<double>* bound[] = {&b.o, &b.lse, &b.dq, &b.dk, &b.dv};
  return {ref[which]->value.at(x), ref[which]->bound.at(x), bound[which]->at(x)};
}

// A dtype value past the bound (error - reference bound > bound, by about `factor`), or within it.
double past_bound(DType t, const Exact& e, double factor) {
  double v = round_to(t, e.r + factor * (e.bound + e.ref_bound));
  while (!(std::fabs(v - e.r) - e.ref_bound > e.bound)) v = step(t, v, +1);
  return v;
}
double within_bound(DType t, const Exact& e) {
  double v = round_to(t, e.r + 0.5 * e.bound);
  while (!(std::fabs(v - e.r) + e.ref_bound <= e.bound)) v = step(t, v, v > e.r ? -1 : +1);
  return v;
}

TEST(FailingElement, RuleTwoNamesTheElementPastItsBound) {
  const Case c = small_case(true);
  const Shape shape = c.problem.kv_shape();
  const std::array<std::int64_t, 4> at{1, 3, 0, 5};
  const std::size_t x = linear(shape, at);
  const Exact e = exact_at(c, 3, x);
  ASSERT_TRUE(e.bound > 0 && std::isfinite(e.bound)) << e.bound;
  const double value = past_bound(DType::fp16, e, 3);
  g_plants = {{3, at, value}};
  const CheckRecord r = run_check(c);
  g_plants.clear();
  const TensorCheck& dk = tensor(r, "dK");
  ASSERT_EQ(dk.verdict, Verdict::fail) << to_table(r);
  EXPECT_EQ(dk.above_rigorous_bound, 1) << to_table(r);
  const ElementReport& w = dk.worst_element;
  EXPECT_EQ(w.index, static_cast<std::int64_t>(x));
  EXPECT_EQ(w.coord, (std::vector<std::int64_t>{1, 3, 0, 5}));
  EXPECT_EQ(w.exact, e.r);
  EXPECT_EQ(w.returned, value);
  EXPECT_EQ(w.bound, e.bound);  // rigorous_bounds gives the bound the check holds it to
  EXPECT_EQ(w.reference_bound, e.ref_bound);
  EXPECT_EQ(w.ratio, dk.bound_ratio);
  EXPECT_GT(w.ratio, 1);
  EXPECT_EQ(w.ratio, std::fabs(value - e.r) / e.bound);
  // The reason, the table and the JSON record name it.
  ASSERT_EQ(dk.reasons.size(), 1u) << to_table(r);
  const std::string& why = dk.reasons[0];
  EXPECT_NE(why.find("1 elements above the rigorous bound (error up to "), std::string::npos) << why;
  EXPECT_NE(why.find("at dK[1, 3, 0, 5]: exact "), std::string::npos) << why;
  char values[200];
  std::snprintf(values, sizeof values, "exact %.9g, returned %.9g, bound %.3g, reference bound %.3g)", e.r, value,
                e.bound, e.ref_bound);
  EXPECT_NE(why.find(values), std::string::npos) << why << "\nexpected: " << values;
  EXPECT_NE(to_table(r).find("dK[1, 3, 0, 5]"), std::string::npos) << to_table(r);
  const json::Value j = json::parse(to_json(r));
  const json::Value& element = j["tensors"][3]["rigorous_bound"]["worst_element"];
  ASSERT_TRUE(element.is_object()) << to_json(r);
  EXPECT_EQ(element["index"], json::Value::array({1, 3, 0, 5}));
  EXPECT_EQ(json::record_number(element["exact"]), e.r);
  EXPECT_EQ(json::record_number(element["returned"]), value);
  EXPECT_EQ(json::record_number(element["bound"]), e.bound);
  EXPECT_EQ(json::record_number(element["reference_bound"]), e.ref_bound);
  EXPECT_EQ(json::record_number(element["error_over_bound"]), w.ratio);
  // No other tensor fails or names an element as failing.
  for (const TensorCheck& t : r.tensors)
    if (t.name != "dK") {
      EXPECT_NE(t.verdict, Verdict::fail) << t.name << "\n" << to_table(r);
      EXPECT_TRUE(t.reasons.empty()) << t.name;
    }
}

TEST(FailingElement, WithinTheBoundNamesNoElementAsFailing) {
  // The twin: the same element moved to about half its bound.
  const Case c = small_case(true);
  const std::array<std::int64_t, 4> at{1, 3, 0, 5};
  const std::size_t x = linear(c.problem.kv_shape(), at);
  const Exact e = exact_at(c, 3, x);
  const double value = within_bound(DType::fp16, e);
  g_plants = {{3, at, value}};
  const CheckRecord r = run_check(c);
  g_plants.clear();
  EXPECT_NE(r.verdict, Verdict::fail) << to_table(r);
  const TensorCheck& dk = tensor(r, "dK");
  EXPECT_EQ(dk.above_rigorous_bound, 0);
  EXPECT_TRUE(dk.reasons.empty());
  EXPECT_LE(dk.worst_element.ratio, 1);  // the element of err/bound, within its bound
  EXPECT_EQ(to_table(r).find("above the rigorous bound"), std::string::npos) << to_table(r);
  for (const TensorCheck& t : r.tensors) {
    EXPECT_TRUE(t.reasons.empty()) << t.name;
    EXPECT_EQ(t.first_nan.index, -1) << t.name;
    EXPECT_EQ(t.first_inf.index, -1) << t.name;
  }
  const json::Value j = json::parse(to_json(r));
  EXPECT_TRUE(j["tensors"][3]["first_nan"].is_null());
  EXPECT_TRUE(j["tensors"][3]["first_inf"].is_null());
}

TEST(FailingElement, LseIsNamedByItsThreeCoordinates) {
  const Case c = small_case(false);
  const std::array<std::int64_t, 4> at{1, 0, 3, 0};  // [b, h, s]
  const std::size_t x = linear(c.problem.lse_shape(), at);
  const Exact e = exact_at(c, 1, x);
  ASSERT_TRUE(e.bound > 0 && std::isfinite(e.bound)) << e.bound;
  const double value = past_bound(DType::fp32, e, 8);
  g_plants = {{1, at, value}};
  const CheckRecord r = run_check(c);
  g_plants.clear();
  const TensorCheck& lse = tensor(r, "LSE");
  ASSERT_EQ(lse.verdict, Verdict::fail) << to_table(r);
  EXPECT_EQ(lse.worst_element.coord, (std::vector<std::int64_t>{1, 0, 3}));
  EXPECT_EQ(lse.worst_element.returned, value);
  EXPECT_EQ(lse.worst_element.bound, e.bound);
  ASSERT_FALSE(lse.reasons.empty());
  EXPECT_NE(lse.reasons[0].find("at LSE[1, 0, 3]: exact "), std::string::npos) << lse.reasons[0];
  const json::Value j = json::parse(to_json(r));
  EXPECT_EQ(j["tensors"][1]["rigorous_bound"]["worst_element"]["index"], json::Value::array({1, 0, 3}));
}

TEST(FailingElement, NanNamesTheFirstNan) {
  const Case c = small_case(false);
  // Two NaNs; the first in the tensor's order ([b, s, h, d], row-major) is named.
  g_plants = {{0, {1, 0, 0, 2}, NAN}, {0, {0, 4, 1, 7}, NAN}};
  const CheckRecord r = run_check(c);
  g_plants.clear();
  const TensorCheck& o = tensor(r, "O");
  ASSERT_EQ(o.verdict, Verdict::fail) << to_table(r);
  EXPECT_EQ(o.errors.nan_mismatch, 2);
  EXPECT_EQ(o.first_nan.coord, (std::vector<std::int64_t>{0, 4, 1, 7}));
  EXPECT_TRUE(std::isnan(o.first_nan.returned));
  const CaseContext ctx = prepare_case(c);
  const double exact = ctx.reference.forward.o.value[linear(c.problem.q_shape(), {0, 4, 1, 7})];
  EXPECT_EQ(o.first_nan.exact, exact);
  EXPECT_EQ(o.first_inf.index, -1);
  ASSERT_FALSE(o.reasons.empty());
  char expected[160];
  std::snprintf(expected, sizeof expected, "2 NaN where the reference is not NaN (first at O[0, 4, 1, 7]: exact %.9g, returned nan)",
                exact);
  EXPECT_EQ(o.reasons[0], expected);
  const json::Value j = json::parse(to_json(r));
  const json::Value& first = j["tensors"][0]["first_nan"];
  EXPECT_EQ(first["index"], json::Value::array({0, 4, 1, 7}));
  EXPECT_EQ(first["returned"], "nan");
  EXPECT_EQ(json::record_number(first["exact"]), exact);
}

TEST(FailingElement, InfNamesTheFirstInf) {
  const Case c = small_case(true);
  g_plants = {{4, {0, 2, 0, 1}, INFINITY}};
  const CheckRecord r = run_check(c);
  g_plants.clear();
  const TensorCheck& dv = tensor(r, "dV");
  ASSERT_EQ(dv.verdict, Verdict::fail) << to_table(r);
  EXPECT_EQ(dv.errors.inf_mismatch, 1);
  EXPECT_EQ(dv.first_inf.coord, (std::vector<std::int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(dv.first_inf.returned, INFINITY);
  EXPECT_EQ(dv.first_nan.index, -1);
  ASSERT_FALSE(dv.reasons.empty());
  EXPECT_NE(dv.reasons[0].find("1 inf/finite mismatches (first at dV[0, 2, 0, 1]: exact "), std::string::npos)
      << dv.reasons[0];
  EXPECT_NE(dv.reasons[0].find(", returned inf)"), std::string::npos) << dv.reasons[0];
  const json::Value j = json::parse(to_json(r));
  EXPECT_EQ(j["tensors"][4]["first_inf"]["index"], json::Value::array({0, 2, 0, 1}));
}

TEST(FailingElement, RigorousBoundsAreTheChecksBounds) {
  // rigorous_bounds (what flashproof.Case.bounds returns) is bit for bit what the check holds the
  // worst element to, for both models, forward and backward, and +inf outside the valid domain.
  for (bool backward : {false, true}) {
    Case c = small_case(backward);
    c.impl = "naive";
    const CheckRecord r = run_check(c);
    const bounds::ImplementationBounds b = rigorous_bounds(c, ArithmeticModel::naive);
    const std::vector<double>* by_tensor[] = {&b.o, &b.lse, &b.dq, &b.dk, &b.dv};
    for (std::size_t t = 0; t < r.tensors.size(); ++t) {
      const ElementReport& w = r.tensors[t].worst_element;
      ASSERT_GE(w.index, 0) << r.tensors[t].name;
      EXPECT_EQ(by_tensor[t]->at(static_cast<std::size_t>(w.index)), w.bound) << r.tensors[t].name;
    }
  }
  Case out = small_case(false);
  out.problem.scale = 1e20f;  // scaled logits far beyond 2^64
  std::string note;
  const bounds::ImplementationBounds b = rigorous_bounds(out, ArithmeticModel::flash, GqaGradientReduction::group_sum, {}, &note);
  EXPECT_FALSE(note.empty());
  for (double x : b.o) EXPECT_EQ(x, INFINITY);
}

}  // namespace
}  // namespace flashproof
