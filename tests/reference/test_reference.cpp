#include <gtest/gtest.h>

#include <cmath>

#include "core/generators.h"
#include "reference/instantiations.h"
#include "tests/reference/reference_checks.h"

namespace flashproof::reference {
namespace {

std::string join(const checks::Failures& f) {
  std::string s;
  for (const auto& x : f) s += x + "\n";
  return s;
}

class ReferenceBackends : public ::testing::TestWithParam<Backend> {};

TEST_P(ReferenceBackends, HandComputedCases) {
  const auto f = checks::hand_cases(GetParam(), Mutation::none);
  EXPECT_TRUE(f.empty()) << join(f);
}

TEST_P(ReferenceBackends, Invariants) {
  const auto f = checks::invariants(GetParam(), Mutation::none);
  EXPECT_TRUE(f.empty()) << join(f);
}

INSTANTIATE_TEST_SUITE_P(All, ReferenceBackends,
                         ::testing::Values(Backend::fast, Backend::mpfr, Backend::cpp_bin_float),
                         [](const auto& info) { return std::string(backend_name(info.param)); });

TEST(Reference, GradientsMatchFiniteDifferencesAt320Bits) {
  const auto f = checks::finite_differences(Mutation::none);
  EXPECT_TRUE(f.empty()) << join(f);
}

// Each deliberately wrong reference must be caught by at least one of the checks above.
TEST(Reference, WrongVariantsAreCaught) {
  for (Mutation m : {Mutation::gradient_sign_flipped, Mutation::scale_applied_twice,
                     Mutation::causal_top_left}) {
    const auto hand = checks::hand_cases(Backend::fast, m);
    const auto fd = checks::finite_differences(m);
    const auto inv = checks::invariants(Backend::fast, m);
    EXPECT_FALSE(hand.empty() && fd.empty() && inv.empty()) << "mutation " << int(m);
    // Record which checks catch which mutation; the log shows it per mutation.
    std::printf("mutation %d caught by: hand %zu, finite differences %zu, invariants %zu\n",
                int(m), hand.size(), fd.size(), inv.size());
  }
}

// ---- Agreement between precisions and backends, at the level of the multiprecision values ----

struct Computed {
  EngineOutput<MpfrReal> fwd, bwd;
};

Problem mixed_problem() {
  Problem p;
  p.dtype = DType::fp16;
  p.batch = 1;
  p.heads_q = 2;
  p.heads_kv = 1;
  p.seqlen_q = 7;
  p.seqlen_k = 5;
  p.head_dim = 8;
  p.window_left = 2;
  p.window_right = 1;
  return p;
}

template <class Real>
void compute(const DenseInputs& in, ArithModel model, EngineOutput<Real>& fwd,
             EngineOutput<Real>& bwd) {
  const Problem& p = in.p;
  const std::vector<std::uint8_t> rows(p.batch * p.heads_q * p.seqlen_q, 1),
      cols(p.batch * p.heads_kv * p.seqlen_k, 1);
  allocate(p, false, fwd);
  allocate(p, true, bwd);
  run_forward<Real>(in, model, rows, fwd, 1, Mutation::none);
  run_backward<Real>(in, model, rows, cols, bwd, 1, Mutation::none);
}

// |a - b| <= bound_a + bound_b element by element, with a and b compared at `bits` of precision;
// also checks that the bounds are tight enough to make the comparison meaningful.
template <class A, class B>
void expect_agree(const char* what, const std::vector<A>& a, const std::vector<double>& ea,
                  const std::vector<B>& b, const std::vector<double>& eb, double max_rel_bound) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t x = 0; x < a.size(); ++x) {
    const MpfrReal va(a[x]);
    const MpfrReal vb = [&] {
      if constexpr (std::is_same_v<B, MpfrReal>) return b[x];
      else return MpfrReal(b[x].str(60, std::ios_base::scientific));  // 60 digits: exact enough
    }();
    if (boost::multiprecision::isinf(va) || boost::multiprecision::isinf(vb)) {
      EXPECT_TRUE(va == vb) << what << "[" << x << "]";
      continue;
    }
    const double diff = std::fabs(static_cast<double>(va - vb));
    const double mag = std::fabs(static_cast<double>(va));
    EXPECT_LE(diff, (ea[x] + eb[x]) * (1 + 0x1p-40) + 1e-60 * mag) << what << "[" << x << "]";
    EXPECT_LE(ea[x], max_rel_bound * (mag + 1)) << what << "[" << x << "] bound too loose";
  }
}

TEST(Reference, MpfrAtPAnd2PAgreeWithinBounds) {
  const Problem p = mixed_problem();
  const Inputs in = generate_inputs(p, Distribution{Distribution::Kind::large_logits, 200}, 3);
  const DenseInputs dense(p, in.q, in.k, in.v, &in.dout);
  EngineOutput<MpfrReal> f128, b128, f256, b256;
  {
    const MpfrPrecision prec(128);
    compute(dense, prec.model(), f128, b128);
  }
  const MpfrPrecision prec(256);
  compute(dense, prec.model(), f256, b256);
  expect_agree("O", f128.o, f128.o_err, f256.o, f256.o_err, 0x1p-100);
  expect_agree("LSE", f128.lse, f128.lse_err, f256.lse, f256.lse_err, 0x1p-100);
  expect_agree("dQ", b128.dq, b128.dq_err, b256.dq, b256.dq_err, 0x1p-100);
  expect_agree("dK", b128.dk, b128.dk_err, b256.dk, b256.dk_err, 0x1p-100);
  expect_agree("dV", b128.dv, b128.dv_err, b256.dv, b256.dv_err, 0x1p-100);
}

TEST(Reference, MpfrAndCppBinFloatAgreeWithinBounds) {
  const Problem p = mixed_problem();
  const Inputs in = generate_inputs(p, Distribution{Distribution::Kind::scaled, 5}, 4);
  const DenseInputs dense(p, in.q, in.k, in.v, &in.dout);
  EngineOutput<BinFloatReal> fb, bb;
  compute(dense, bin_float_model(), fb, bb);
  const MpfrPrecision prec(256);  // comparisons at 256 bits; the MPFR results at 128
  EngineOutput<MpfrReal> fm, bm;
  {
    const MpfrPrecision p128(128);
    compute(dense, p128.model(), fm, bm);
  }
  expect_agree("O", fm.o, fm.o_err, fb.o, fb.o_err, 0x1p-100);
  expect_agree("LSE", fm.lse, fm.lse_err, fb.lse, fb.lse_err, 0x1p-100);
  expect_agree("dQ", bm.dq, bm.dq_err, bb.dq, bb.dq_err, 0x1p-100);
  expect_agree("dK", bm.dk, bm.dk_err, bb.dk, bb.dk_err, 0x1p-100);
  expect_agree("dV", bm.dv, bm.dv_err, bb.dv, bb.dv_err, 0x1p-100);
}

}  // namespace
}  // namespace flashproof::reference
