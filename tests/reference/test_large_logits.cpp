// Logits near the top of the valid domain (docs/spec.md) (|scale q.k| up to 2^64): the reference must return
// finite O, LSE and gradients with small certified bounds, for fp16 and for bf16 (whose wide
// exponent range lets the large-logits generator actually reach 1e18 and beyond).
//
// Regression: the fast path used to take the softmax shift from the high halves of its logit
// pairs (s = hi + lo, |lo| up to 2^-26 |s|), so with logits of 1e18 a "shifted" logit could be
// +1e10, exp overflowed and O/LSE/gradients came out NaN; and the fallback treated a NaN from the
// fast path as final ("nothing to gain from more precision") instead of recomputing it in MPFR.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>

#include "core/generators.h"
#include "reference/arith.h"
#include "reference/reference.h"

namespace flashproof::reference {
namespace {

struct LargeCase {
  DType dtype;
  double logits;
  std::uint64_t seed;
  std::int64_t hq, hkv, sq, sk, d;
  bool causal;
};

std::string name_of(const LargeCase& c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s_%.0e_seed%llu_%lldx%lld_d%lld%s", std::string(dtype_name(c.dtype)).c_str(),
                c.logits, static_cast<unsigned long long>(c.seed), static_cast<long long>(c.sq),
                static_cast<long long>(c.sk), static_cast<long long>(c.d),
                c.causal ? "_causal" : "");
  std::string s = buf;
  for (char& ch : s)
    if (ch == '+' || ch == '.' || ch == '-') ch = '_';
  return s;
}

void PrintTo(const LargeCase& c, std::ostream* os) { *os << name_of(c); }

Problem problem_of(const LargeCase& c) {
  Problem p;
  p.dtype = c.dtype;
  p.heads_q = c.hq;
  p.heads_kv = c.hkv;
  p.seqlen_q = c.sq;
  p.seqlen_k = c.sk;
  p.head_dim = c.d;
  if (c.causal) p.window_right = 0;
  return p;
}

// Every checked value is finite (an LSE of +inf only where the row sees no key, exact), its bound
// is finite and meets the default requirement (2^-40 of its magnitude).
void expect_certified(const char* what, const CertifiedTensor& t) {
  std::int64_t bad = 0;
  for (std::size_t x = 0; x < t.value.size(); ++x) {
    if (!t.checked[x]) continue;
    const double v = t.value[x], b = t.bound[x];
    const bool exact_inf = std::isinf(v) && v > 0 && b == 0;
    const bool ok = exact_inf || (std::isfinite(v) && b <= std::max(0x1p-40 * t.magnitude[x],
                                                                    2 * kFloor));
    if (!ok && ++bad <= 3)
      ADD_FAILURE() << what << "[" << x << "] value " << v << " bound " << b << " magnitude "
                    << t.magnitude[x];
  }
  EXPECT_EQ(bad, 0) << what << ": elements not finite or not certified";
}

void expect_agree(const char* what, const CertifiedTensor& a, const CertifiedTensor& b) {
  ASSERT_EQ(a.value.size(), b.value.size());
  std::int64_t bad = 0;
  for (std::size_t x = 0; x < a.value.size(); ++x) {
    if (std::isinf(a.value[x]) || std::isinf(b.value[x])) {
      if (a.value[x] != b.value[x] && ++bad <= 3)
        ADD_FAILURE() << what << "[" << x << "] " << a.value[x] << " vs " << b.value[x];
      continue;
    }
    if (!(std::fabs(a.value[x] - b.value[x]) <= a.bound[x] + b.bound[x]) && ++bad <= 3)
      ADD_FAILURE() << what << "[" << x << "] " << a.value[x] << " vs " << b.value[x]
                    << " bounds " << a.bound[x] << " + " << b.bound[x];
  }
  EXPECT_EQ(bad, 0) << what;
}

class LargeLogits : public ::testing::TestWithParam<LargeCase> {};

// A case's forward and backward with `fast` options and with the pure MPFR backend.
struct Runs {
  ForwardResult f, fm;
  BackwardResult b, bm;
};
Runs run_both(const LargeCase& c, const Options& fast) {
  const Problem p = problem_of(c);
  const Inputs in =
      generate_inputs(p, Distribution{Distribution::Kind::large_logits, c.logits}, c.seed);
  Options exact;
  exact.backend = Backend::mpfr;
  return {forward(p, in.q, in.k, in.v, fast), forward(p, in.q, in.k, in.v, exact),
          backward(p, in.q, in.k, in.v, in.dout, fast), backward(p, in.q, in.k, in.v, in.dout, exact)};
}
void expect_all_agree(const Runs& r) {
  expect_agree("O", r.f.o, r.fm.o);
  expect_agree("LSE", r.f.lse, r.fm.lse);
  expect_agree("dQ", r.b.dq, r.bm.dq);
  expect_agree("dK", r.b.dk, r.bm.dk);
  expect_agree("dV", r.b.dv, r.bm.dv);
}
void expect_no_fallback(const Runs& r) {
  EXPECT_EQ(r.f.stats.fallback_rows, 0);
  EXPECT_EQ(r.b.stats.fallback_rows, 0);
  EXPECT_EQ(r.b.stats.fallback_columns, 0);
}

// The public fast path (with its MPFR fallback) certifies every element and agrees with the pure
// MPFR backend within the two bounds.
TEST_P(LargeLogits, FastPathWithFallbackIsFiniteCertifiedAndAgreesWithMpfr) {
  const Runs r = run_both(GetParam(), Options{});
  expect_certified("O", r.f.o);
  expect_certified("LSE", r.f.lse);
  expect_certified("O (mpfr)", r.fm.o);
  expect_certified("LSE (mpfr)", r.fm.lse);
  expect_certified("dQ", r.b.dq);
  expect_certified("dK", r.b.dk);
  expect_certified("dV", r.b.dv);
  expect_all_agree(r);
}

// The double-precision engine alone (a requirement every finite bound meets, so nothing falls
// back): finite values and finite bounds, which agree with MPFR. Before the fix the shift made
// exp overflow and rows came out NaN.
TEST_P(LargeLogits, DoubleEngineAloneStaysFiniteAndAgreesWithMpfr) {
  Options loose;
  loose.abs_requirement = kInf;  // accept any bound: the engine's own results come back
  const Runs r = run_both(GetParam(), loose);
  expect_no_fallback(r);
  for (const auto& [what, t] : {std::pair<const char*, const CertifiedTensor*>{"O", &r.f.o},
                                {"LSE", &r.f.lse}, {"dQ", &r.b.dq}, {"dK", &r.b.dk}, {"dV", &r.b.dv}}) {
    std::int64_t nonfinite = 0;
    for (std::size_t x = 0; x < t->value.size(); ++x) {
      const bool exact_inf = std::isinf(t->value[x]) && t->bound[x] == 0;
      if (!exact_inf && !(std::isfinite(t->value[x]) && std::isfinite(t->bound[x]))) ++nonfinite;
    }
    EXPECT_EQ(nonfinite, 0) << what << ": values or bounds not finite in the double engine";
  }
  expect_all_agree(r);
}

// With the default requirement (2^-40 of each element's magnitude) the double engine certifies
// these cases by itself: the logits' Sum3 dot products and exact parts, and D summed as
// sum_j P_j dP_j, leave no row or column to the MPFR fallback (campaign throughput, docs/fuzz.md "Throughput": each such row
// used to cost MPFR time). The results still agree with MPFR within the two bounds.
TEST_P(LargeLogits, DoubleEngineMeetsTheDefaultRequirementWithoutFallback) {
  const Runs r = run_both(GetParam(), Options{});
  expect_no_fallback(r);
  expect_all_agree(r);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LargeLogits,
    ::testing::Values(
        // The reported case (bf16, logits 1e18, seed 7).
        LargeCase{DType::bf16, 1e18, 7, 1, 1, 65, 129, 128, false},
        LargeCase{DType::bf16, 1e6, 7, 2, 1, 17, 33, 64, false},
        LargeCase{DType::bf16, 1e12, 11, 2, 1, 17, 33, 64, true},
        LargeCase{DType::bf16, 1e18, 3, 2, 1, 24, 40, 128, true},
        LargeCase{DType::bf16, 4e18, 5, 2, 2, 17, 33, 96, false},
        LargeCase{DType::bf16, 4e18, 7, 1, 1, 9, 70, 256, true},
        LargeCase{DType::fp16, 1e6, 7, 2, 1, 17, 33, 64, false},
        LargeCase{DType::fp16, 1e12, 7, 2, 1, 17, 33, 64, true},
        LargeCase{DType::fp16, 1e18, 7, 2, 1, 70, 90, 64, true},
        LargeCase{DType::fp16, 4e18, 13, 1, 1, 20, 24, 128, false}),
    [](const auto& info) { return name_of(info.param); });

}  // namespace
}  // namespace flashproof::reference
