// The FA2 kernels on the host emulator (label `emulated`): every head-dim bucket, no mask / causal
// / local, GQA 1, 2 and MQA, seqlen_q != seqlen_k both ways including 1, ragged last blocks, fp16
// and bf16, forward and backward, against the reference through the harness's verdict (no NaN or
// inf where the reference is finite; error within 2x (forward) / 3x (backward) of the naive
// baseline's plus a rounding floor). Then what the verdict cannot see: untouched bytes outside
// strided outputs, bitwise reproducibility of the deterministic backward, and the API's errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/generators.h"
#include "harness/check.h"
#include "tests/kernels/flash/flash_cases.h"
#include "kernels/fa2/api.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

using namespace flash_tests;

// These tests are about the emulated kernels, also on a machine with a GPU.
const bool kForceEmulator = [] { return setenv("FLASHPROOF_TARGET", "emulated", 1) == 0; }();

class Fa2Emulated : public ::testing::TestWithParam<FlashCase> {};

TEST_P(Fa2Emulated, ForwardAndBackwardMeetTheBaselineRule) {
  if (const std::string why = bucket_not_built(GetParam()); !why.empty()) GTEST_SKIP() << why;
  expect_case_passes(GetParam(), "emulated");
}

INSTANTIATE_TEST_SUITE_P(Matrix, Fa2Emulated, ::testing::ValuesIn(matrix_cases("fa2")),
                         [](const auto& info) { return info.param.label; });
INSTANTIATE_TEST_SUITE_P(Edges, Fa2Emulated, ::testing::ValuesIn(edge_cases("fa2", "fa2-deterministic")),
                         [](const auto& info) { return info.param.label; });

// ---- strided, poisoned outputs: every valid element written, nothing outside ----

TEST(Fa2Outputs, StridedPoisonedOutputsAreWrittenExactlyInsideTheView) {
  expect_outputs_written_exactly_in_views("fa2");
}

// The counts above must see a missing and a stray write.
TEST(Fa2Outputs, TheWriteCheckSeesUnwrittenAndStrayElements) {
  Problem p = make_problem(DType::fp16, 32, 1, 1, 5, 5, -1, -1);
  HostTensor o = poisoned_view(p.dtype, p.q_shape(), 8);
  for (std::int64_t i = 0; i < p.seqlen_q; ++i)
    for (std::int64_t c = 0; c < p.head_dim; ++c) o.set(0, i, 0, c, 0.5);
  EXPECT_EQ(count_writes(o).unwritten, 0);
  o.set_bits(0, 2, 0, 7, kPoison);
  o.set_raw_bits(3 * 40 + 35, 0);  // row 3, column 35: past head_dim 32
  EXPECT_EQ(count_writes(o).unwritten, 1);
  EXPECT_EQ(count_writes(o).stray, 1);
}

// ---- deterministic backward ----

TEST(Fa2Deterministic, BackwardIsBitwiseReproducible) {
  // Many key blocks add into each dQ row (seqlen_k = 5 blocks of 128 for d = 64).
  Problem p = make_problem(DType::bf16, 64, 4, 1, 100, 600, -1, -1);
  const Inputs in = generate_inputs(p, Distribution{}, 11);
  AttentionImpl* det = find_implementation("fa2-deterministic");
  ASSERT_NE(det, nullptr);
  HostTensor o(p.dtype, p.q_shape()), lse(DType::fp32, p.lse_shape(), 3);
  det->forward(p, {in.q, in.k, in.v, o, lse});
  std::vector<std::uint32_t> first[3];
  for (int run = 0; run < 3; ++run) {
    HostTensor dq(p.dtype, p.q_shape()), dk(p.dtype, p.kv_shape()), dv(p.dtype, p.kv_shape());
    det->backward(p, {in.q, in.k, in.v, o, lse, in.dout, dq, dk, dv});
    const std::vector<std::uint32_t> now[3] = {all_bits(dq), all_bits(dk), all_bits(dv)};
    for (int t = 0; t < 3; ++t) {
      if (run == 0)
        first[t] = now[t];
      else
        EXPECT_EQ(now[t], first[t]) << "run " << run << " tensor " << t;
    }
  }
}

// ---- API validation ----

struct ApiFixture {
  // Contiguous q [1, 16, 4, 64] and k/v [1, 32, 2, 64] in host memory (emulated target).
  static constexpr auto kHost = kernels::FlashTarget::emulated;
  kernels::FlashBuffer q{kHost, 16 * 4 * 64 * 2}, k{kHost, 32 * 2 * 64 * 2}, v{kHost, 32 * 2 * 64 * 2},
      o{kHost, 16 * 4 * 64 * 2};
  std::vector<float> lse = std::vector<float>(4 * 16);
  kernels::FlashForwardTensors t;
  ApiFixture() {
    std::memset(q.data(), 0, q.bytes());
    std::memset(k.data(), 0, k.bytes());
    std::memset(v.data(), 0, v.bytes());
    t.q = {q.data(), {1, 16, 4, 64}, {16 * 4 * 64, 4 * 64, 64, 1}};
    t.k = {k.data(), {1, 32, 2, 64}, {32 * 2 * 64, 2 * 64, 64, 1}};
    t.v = {v.data(), {1, 32, 2, 64}, {32 * 2 * 64, 2 * 64, 64, 1}};
    t.o = {o.data(), {1, 16, 4, 64}, {16 * 4 * 64, 4 * 64, 64, 1}};
    t.lse = lse.data();
  }
};

std::string forward_error(const std::function<void(kernels::FlashForwardTensors&, kernels::FlashOptions&)>& spoil) {
  ApiFixture f;
  kernels::FlashOptions options;
  spoil(f.t, options);
  const std::string e = kernels::fa2_forward_error(kernels::FlashTarget::emulated, f.t, options);
  if (!e.empty()) {
    try {
      kernels::fa2_forward(kernels::FlashTarget::emulated, kernels::FlashDtype::fp16, f.t, options);
      ADD_FAILURE() << "fa2_forward accepted what fa2_forward_error rejects: " << e;
    } catch (const std::invalid_argument& x) {
      EXPECT_EQ(std::string(x.what()), e);
    }
  }
  return e;
}

TEST(Fa2Api, ValidArgumentsRun) {
  EXPECT_EQ(forward_error([](auto&, auto&) {}), "");
  ApiFixture f;
  EXPECT_NO_THROW(kernels::fa2_forward(kernels::FlashTarget::emulated, kernels::FlashDtype::bf16, f.t, {}));
  for (float x : f.lse) EXPECT_TRUE(std::isfinite(x));
}

TEST(Fa2Api, BadArgumentsGetOneLineErrors) {
  const std::pair<std::string, std::function<void(kernels::FlashForwardTensors&, kernels::FlashOptions&)>> bad[] = {
      {"heads_q (4) must be a multiple of heads_kv (3)", [](auto& t, auto&) { t.k.sizes[2] = 3, t.v.sizes[2] = 3; }},
      {"head_dim (260) must be at most 256", [](auto& t, auto&) { t.q.sizes[3] = t.k.sizes[3] = 260; }},
      {"head_dim (60) must be a multiple of 8", [](auto& t, auto&) { t.q.sizes[3] = t.k.sizes[3] = 60; }},
      {"k has head_dim (32) but q has 64", [](auto& t, auto&) { t.k.sizes[3] = 32; }},
      {"v has seqlen (31) where 32 is expected", [](auto& t, auto&) { t.v.sizes[1] = 31; }},
      {"o must have a contiguous last dimension", [](auto& t, auto&) { t.o.strides[3] = 2; }},
      {"q strides must be non-negative multiples of 8", [](auto& t, auto&) { t.q.strides[1] = 260; }},
      {"k data must be 16-byte aligned",
       [](auto& t, auto&) { t.k.data = static_cast<char*>(t.k.data) + 2; }},
      {"lse is null", [](auto& t, auto&) { t.lse = nullptr; }},
      {"q sizes must be >= 1", [](auto& t, auto&) { t.q.sizes[1] = 0; }},
      {"softmax_scale must be finite", [](auto&, auto& o) { o.softmax_scale = std::nanf(""); }},
  };
  for (const auto& [expected, spoil] : bad) {
    const std::string e = forward_error(spoil);
    EXPECT_NE(e.find(expected), std::string::npos) << "expected '" << expected << "', got '" << e << "'";
    EXPECT_EQ(e.rfind("fa2: ", 0), 0u) << e;  // the shared checks (kernels/flash/validate.h) name FA2
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(Fa2Api, GpuTargetWithoutAGpuIsAnError) {
  if (kernels::flash_gpu_usable()) GTEST_SKIP() << "a GPU is usable here";
  ApiFixture f;
  EXPECT_THROW(kernels::fa2_forward(kernels::FlashTarget::gpu, kernels::FlashDtype::fp16, f.t, {}),
               std::invalid_argument);
}

TEST(Fa2Api, HarnessRejectsFp32WithAReason) {
  AttentionImpl* fa2 = find_implementation("fa2");
  ASSERT_NE(fa2, nullptr);
  Problem p;
  p.dtype = DType::fp32;
  EXPECT_NE(fa2->unsupported_reason(p, false).find("fp16 and bf16 only"), std::string::npos);
}

}  // namespace
}  // namespace flashproof
