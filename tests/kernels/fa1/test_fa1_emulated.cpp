// The FA1 kernels on the host emulator (label `emulated`): the flash test matrix and edge cases
// through the harness's verdict, FA1 against FA2 on every case, outputs written exactly inside
// strided views, a forward bitwise independent of how the query blocks are split over thread blocks,
// a bitwise reproducible backward, and the API's errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/api.h"
#include "kernels/fa2/api.h"
#include "tests/kernels/fa1/fa1_agreement.h"
#include "tests/kernels/flash/flash_cases.h"

namespace flashproof {
namespace {

using namespace flash_tests;

// These tests are about the emulated kernels, also on a machine with a GPU.
const bool kForceEmulator = [] { return setenv("FLASHPROOF_TARGET", "emulated", 1) == 0; }();

class Fa1Emulated : public ::testing::TestWithParam<FlashCase> {};

TEST_P(Fa1Emulated, MeetsTheBaselineRuleAndAgreesWithFa2) {
  if (const std::string why = fa1_or_fa2_not_built(GetParam()); !why.empty()) GTEST_SKIP() << why;
  expect_fa1_case_passes_and_matches_fa2(GetParam(), "emulated");
}

INSTANTIATE_TEST_SUITE_P(Matrix, Fa1Emulated, ::testing::ValuesIn(matrix_cases("fa1")),
                         [](const auto& info) { return info.param.label; });
INSTANTIATE_TEST_SUITE_P(Edges, Fa1Emulated, ::testing::ValuesIn(edge_cases("fa1", "fa1")),
                         [](const auto& info) { return info.param.label; });

TEST(Fa1Outputs, StridedPoisonedOutputsAreWrittenExactlyInsideTheView) {
  expect_outputs_written_exactly_in_views("fa1");
}

// ---- the kernels through the API, in host memory ----

constexpr auto kHost = kernels::FlashTarget::emulated;

// Contiguous [batch, seqlen, heads, head_dim] fp16 tensors of a problem, in host memory.
struct HostProblem {
  Problem p;
  Inputs in;
  std::vector<kernels::FlashBuffer*> owned;
  kernels::FlashBuffer q, k, v, o, dout, dq, dk, dv, lse;

  static std::size_t bytes(const Shape& s) { return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]) * 2; }
  explicit HostProblem(const Problem& problem)
      : p(problem),
        in(generate_inputs(p, Distribution{}, 5)),
        q(kHost, bytes(p.q_shape())), k(kHost, bytes(p.kv_shape())), v(kHost, bytes(p.kv_shape())),
        o(kHost, bytes(p.q_shape())), dout(kHost, bytes(p.q_shape())), dq(kHost, bytes(p.q_shape())),
        dk(kHost, bytes(p.kv_shape())), dv(kHost, bytes(p.kv_shape())),
        lse(kHost, static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q) * 4) {
    q.upload(in.q.storage_data(), q.bytes());
    k.upload(in.k.storage_data(), k.bytes());
    v.upload(in.v.storage_data(), v.bytes());
    dout.upload(in.dout.storage_data(), dout.bytes());
  }
  static kernels::FlashTensor tensor(const kernels::FlashBuffer& b, const Shape& s) {
    return {b.data(), {s[0], s[1], s[2], s[3]}, {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}};
  }
  kernels::FlashForwardTensors forward_tensors() const {
    return {tensor(q, p.q_shape()), tensor(k, p.kv_shape()), tensor(v, p.kv_shape()), tensor(o, p.q_shape()),
            static_cast<float*>(lse.data())};
  }
  kernels::FlashBackwardTensors backward_tensors() const {
    return {tensor(q, p.q_shape()),    tensor(k, p.kv_shape()),  tensor(v, p.kv_shape()),
            tensor(o, p.q_shape()),    tensor(dout, p.q_shape()), tensor(dq, p.q_shape()),
            tensor(dk, p.kv_shape()),  tensor(dv, p.kv_shape()),  static_cast<const float*>(lse.data())};
  }
  kernels::FlashOptions options() const {
    kernels::FlashOptions opt;
    opt.window_left = static_cast<int>(p.window_left);
    opt.window_right = static_cast<int>(p.window_right);
    return opt;
  }
};

std::vector<std::uint8_t> bytes_of(const kernels::FlashBuffer& b) {
  std::vector<std::uint8_t> out(b.bytes());
  b.download(out.data(), out.size());
  return out;
}

// Each row's key blocks run in order in one thread block whatever the split, so O and LSE must be
// bitwise the same for every number of thread blocks per head. Causal with seqlen_q > seqlen_k
// makes some query blocks empty (written by the epilogue) and others partly empty.
TEST(Fa1Forward, QuerySplitsDoNotChangeABit) {
  HostProblem h(make_problem(DType::fp16, 64, 2, 1, 300, 170, -1, 0));
  std::vector<std::uint8_t> o_ref, lse_ref;
  for (int splits : {1, 2, 3, 5, 0}) {
    kernels::fa1_forward(kHost, kernels::FlashDtype::fp16, h.forward_tensors(), h.options(), splits);
    if (splits == 1) {
      o_ref = bytes_of(h.o), lse_ref = bytes_of(h.lse);
      continue;
    }
    EXPECT_EQ(bytes_of(h.o), o_ref) << splits << " splits";
    EXPECT_EQ(bytes_of(h.lse), lse_ref) << splits << " splits";
  }
}

TEST(Fa1Backward, IsBitwiseReproducible) {
  // Several key blocks add into each dQ row, and two query heads into each dK, dV.
  HostProblem h(make_problem(DType::bf16, 64, 4, 2, 150, 330, -1, -1));
  kernels::fa1_forward(kHost, kernels::FlashDtype::bf16, h.forward_tensors(), h.options());
  std::vector<std::uint8_t> first[3];
  for (int run = 0; run < 3; ++run) {
    kernels::fa1_backward(kHost, kernels::FlashDtype::bf16, h.backward_tensors(), h.options());
    const std::vector<std::uint8_t> now[3] = {bytes_of(h.dq), bytes_of(h.dk), bytes_of(h.dv)};
    for (int t = 0; t < 3; ++t) {
      if (run == 0)
        first[t] = now[t];
      else
        EXPECT_EQ(now[t], first[t]) << "run " << run << " tensor " << t;
    }
  }
}

TEST(Fa1Api, ErrorsNameFa1) {
  HostProblem h(make_problem(DType::fp16, 64, 2, 1, 20, 20, -1, -1));
  kernels::FlashForwardTensors t = h.forward_tensors();
  t.k.sizes[2] = 3;
  const std::string e = kernels::fa1_forward_error(kHost, t, {});
  EXPECT_EQ(e, "fa1: heads_q (2) must be a multiple of heads_kv (3)");
  EXPECT_THROW(kernels::fa1_forward(kHost, kernels::FlashDtype::fp16, t, {}), std::invalid_argument);
  EXPECT_THROW(kernels::fa1_forward(kHost, kernels::FlashDtype::fp16, h.forward_tensors(), {}, -1),
               std::invalid_argument);
  kernels::FlashBackwardTensors b = h.backward_tensors();
  b.dk.sizes[1] = 19;
  EXPECT_EQ(kernels::fa1_backward_error(kHost, b, {}), "fa1: dk has seqlen (19) where 20 is expected");
}

TEST(Fa1Api, HeadDimsMapToThreeBuckets) {
  EXPECT_EQ(algo::fa1_head_dim_bucket(8), 64);
  EXPECT_EQ(algo::fa1_head_dim_bucket(64), 64);
  EXPECT_EQ(algo::fa1_head_dim_bucket(72), 128);
  EXPECT_EQ(algo::fa1_head_dim_bucket(136), 256);
  EXPECT_EQ(algo::fa1_head_dim_bucket(256), 256);
  EXPECT_EQ(algo::fa1_head_dim_bucket(264), 0);
}

}  // namespace
}  // namespace flashproof
