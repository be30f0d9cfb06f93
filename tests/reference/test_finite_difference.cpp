// The certified central difference (reference/finite_difference.h): its truncation bound covers
// the difference quotient's actual error and is not loose by more than 8x where a row's softmax is
// a sigmoid (whose third derivative is known), masked keys left out of the ranges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/generators.h"
#include "reference/finite_difference.h"
#include "reference/instantiations.h"

namespace flashproof::reference {
namespace {

// One query, three keys of which the window shows the last two (left 1, right 0, offset 2),
// head dim 1, scale 1. The masked key 0 has a large key and value: counted, it would inflate
// both ranges.
struct SigmoidCase {
  Problem p;
  HostTensor q, k, v, dout;
  SigmoidCase(double q0, std::vector<double> keys, std::vector<double> values)
      : p{.seqlen_q = 1, .seqlen_k = 3, .head_dim = 1, .dtype = DType::fp32, .scale = 1.0f, .window_left = 1,
          .window_right = 0} {
    q = HostTensor(p.dtype, p.q_shape());
    k = HostTensor(p.dtype, p.kv_shape());
    v = HostTensor(p.dtype, p.kv_shape());
    dout = HostTensor(p.dtype, p.q_shape());
    q.set(0, 0, 0, 0, q0);
    dout.set(0, 0, 0, 0, 1);
    for (int j = 0; j < 3; ++j) {
      k.set(0, j, 0, 0, keys[j]);
      v.set(0, j, 0, 0, values[j]);
    }
  }
  DenseInputs dense() const { return DenseInputs(p, q, k, v, &dout); }
};

// The visible logits are t {0, 16} and the values {0, 1}, so L(t) = sigmoid(16 t), L'(0) = 4,
// and |L'''| <= 16^3 / 8 (attained at 0): the bound's 5/8 R_w R_a^3 is 5x that.
void expect_sigmoid_truncation(const DenseInputs& in, DenseRows DenseInputs::*rows, const std::vector<double>& dir) {
  for (int e = 3; e <= 9; e += 3) {
    const double h = std::ldexp(1.0, -e);
    const CentralDifference fd = central_difference(in, rows, dir, h, 256);
    const double actual = std::fabs(fd.value - 4);
    SCOPED_TRACE("h = 2^-" + std::to_string(e));
    ASSERT_LT(fd.evaluation, actual / 1024);  // the measurement is the truncation
    EXPECT_LE(actual, fd.truncation);
    EXPECT_LE(fd.truncation, 8 * actual);
  }
}

TEST(FiniteDifference, TruncationBoundAlongQIsWithinEightTimesASigmoids) {
  const SigmoidCase c(0, {100, 0, 16}, {1000, 0, 1});
  expect_sigmoid_truncation(c.dense(), &DenseInputs::q, {1});
}

TEST(FiniteDifference, TruncationBoundAlongKIsWithinEightTimesASigmoids) {
  const SigmoidCase c(16, {0, 0, 0}, {1000, 0, 1});
  expect_sigmoid_truncation(c.dense(), &DenseInputs::k, {-1, 0, 1});
}

// A GQA, masked case with logits of several units: for each of Q, K, V and several steps, the
// central difference is within its certified errors of the reference's own MPFR gradient (itself
// certified), and along V (L linear) the truncation bound is 0.
TEST(FiniteDifference, CertifiedErrorsCoverTheReferencesGradient) {
  const Problem p{.heads_q = 2, .heads_kv = 1, .seqlen_q = 3, .seqlen_k = 5, .head_dim = 4, .dtype = DType::fp16,
                  .scale = 2.0f, .window_left = 2, .window_right = 0};
  const Inputs inputs = generate_inputs(p, Distribution{}, 5);
  const DenseInputs in(p, inputs.q, inputs.k, inputs.v, &inputs.dout);
  const MpfrPrecision precision(256);
  EngineOutput<MpfrReal> grad;
  allocate(p, true, grad);
  run_backward<MpfrReal>(in, precision.model(), std::vector<std::uint8_t>(p.heads_q * p.seqlen_q, 1),
                                    std::vector<std::uint8_t>(p.heads_kv * p.seqlen_k, 1), grad, 1,
                                    Mutation::none);
  struct Target {
    const char* name;
    DenseRows DenseInputs::*rows;
    const std::vector<MpfrReal>* gradient;  // [b, s, h, d]
    const std::vector<double>* error;
  };
  const Target targets[] = {{"dQ", &DenseInputs::q, &grad.dq, &grad.dq_err},
                            {"dK", &DenseInputs::k, &grad.dk, &grad.dk_err},
                            {"dV", &DenseInputs::v, &grad.dv, &grad.dv_err}};
  for (const Target& t : targets) {
    const DenseRows& rows = in.*t.rows;
    std::vector<double> dir(rows.data.size());
    for (std::size_t x = 0; x < dir.size(); ++x) dir[x] = static_cast<double>(x % 3) - 1;
    MpfrReal analytic = 0;
    double analytic_error = 0;
    rows.for_each_element([&](const DenseRows::Element& e) {
      const double u = dir[e.dense];
      analytic += (*t.gradient)[e.spec] * MpfrReal(u);
      analytic_error += (*t.error)[e.spec] * std::fabs(u);
    });
    for (int e = 2; e <= 8; e += 3) {
      SCOPED_TRACE(std::string(t.name) + ", h = 2^-" + std::to_string(e));
      const CentralDifference fd = central_difference(in, t.rows, dir, std::ldexp(1.0, -e), 256);
      const double actual = std::fabs(static_cast<double>(MpfrReal(fd.value) - analytic));
      EXPECT_LE(actual, fd.evaluation + fd.truncation + analytic_error * (1 + 0x1p-20));
      if (t.rows == &DenseInputs::v) EXPECT_EQ(fd.truncation, 0);
      else EXPECT_GT(actual, fd.evaluation + analytic_error);  // the step is large enough to show
    }
  }
}

}  // namespace
}  // namespace flashproof::reference
