// The checks the flash kernels' APIs share (kernels/flash/validate.h), through a made-up kernel
// "fa9": every message carries the kernel's own prefix and an unbuilt bucket names the kernel's own
// CMake option, so FA1 and FA2 errors stay distinguishable. No kernel runs (label `unit`).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/flash/api.h"
#include "kernels/flash/validate.h"

namespace flashproof::kernels {
namespace {

int bucket_of(int head_dim) { return head_dim <= 64 ? 64 : head_dim <= 128 ? 128 : 0; }
bool only_64_built(int bucket) { return bucket == 64; }

constexpr FlashKernelLimits kFa9{"fa9", &bucket_of, &only_64_built, "FLASHPROOF_FA9_HEAD_DIMS"};

// Contiguous q/o [1, 16, 4, d] and k/v [1, 32, 2, d] in host memory (emulated target).
struct Call {
  static constexpr std::int64_t kMaxD = 128;
  FlashBuffer q{FlashTarget::emulated, 16 * 4 * kMaxD * 2}, k{FlashTarget::emulated, 32 * 2 * kMaxD * 2},
      v{FlashTarget::emulated, 32 * 2 * kMaxD * 2}, o{FlashTarget::emulated, 16 * 4 * kMaxD * 2};
  std::vector<float> lse = std::vector<float>(4 * 16);
  FlashForwardTensors t;
  explicit Call(std::int64_t d) {
    t.q = {q.data(), {1, 16, 4, d}, {16 * 4 * d, 4 * d, d, 1}};
    t.k = {k.data(), {1, 32, 2, d}, {32 * 2 * d, 2 * d, d, 1}};
    t.v = {v.data(), {1, 32, 2, d}, {32 * 2 * d, 2 * d, d, 1}};
    t.o = {o.data(), {1, 16, 4, d}, {16 * 4 * d, 4 * d, d, 1}};
    t.lse = lse.data();
  }
};

TEST(FlashValidate, ValidCallHasNoError) {
  Call c(64);
  EXPECT_EQ(flash_forward_error(kFa9, FlashTarget::emulated, c.t, {}), "");
}

TEST(FlashValidate, MessagesCarryTheKernelsPrefix) {
  Call c(64);
  c.t.lse = nullptr;
  EXPECT_EQ(flash_forward_error(kFa9, FlashTarget::emulated, c.t, {}), "fa9: lse is null");
  Call d(64);
  d.t.v.sizes[1] = 31;
  EXPECT_EQ(flash_forward_error(kFa9, FlashTarget::emulated, d.t, {}), "fa9: v has seqlen (31) where 32 is expected");
  Call e(64);
  const FlashOptions inf_scale{.softmax_scale = std::numeric_limits<float>::infinity()};
  EXPECT_EQ(flash_forward_error(kFa9, FlashTarget::emulated, e.t, inf_scale), "fa9: softmax_scale must be finite");
  if (!flash_gpu_usable()) {
    EXPECT_EQ(flash_forward_error(kFa9, FlashTarget::gpu, e.t, {}),
              "fa9: target gpu requested but no usable GPU (sm_80+) in this build");
  }
}

TEST(FlashValidate, UnbuiltBucketNamesTheKernelsOption) {
  Call c(128);
  EXPECT_EQ(flash_forward_error(kFa9, FlashTarget::emulated, c.t, {}),
            "fa9: head_dim bucket 128 is not built (FLASHPROOF_FA9_HEAD_DIMS)");
}

TEST(FlashValidate, BackwardChecksItsOwnTensors) {
  Call c(64);
  FlashBackwardTensors b{c.t.q, c.t.k, c.t.v, c.t.o, c.t.o, c.t.q, c.t.k, c.t.v, c.t.lse};
  EXPECT_EQ(flash_backward_error(kFa9, FlashTarget::emulated, b, {}), "");
  b.dk.strides[3] = 2;
  EXPECT_EQ(flash_backward_error(kFa9, FlashTarget::emulated, b, {}),
            "fa9: dk must have a contiguous last dimension (stride 1, got 2)");
}

TEST(FlashValidate, ShapeClampsTheWindowToTheSequenceLengths) {
  Call c(64);
  FlashOptions wide;
  wide.window_left = wide.window_right = 1000;
  const FlashShape s = make_flash_shape(FlashDtype::bf16, c.t.q, c.t.k, wide);
  EXPECT_EQ(s.window_left, 32);   // seqlen_k
  EXPECT_EQ(s.window_right, 16);  // seqlen_q
  EXPECT_EQ(s.softmax_scale, 0.125f);
}

}  // namespace
}  // namespace flashproof::kernels
