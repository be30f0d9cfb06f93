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

// ---- packed batches (FlashOptions::cu_seqlens_q / _k): q has 16 rows, k 32 keys ----

std::string packed_error(const Call& c, std::vector<std::int32_t> cu_q, std::vector<std::int32_t> cu_k) {
  FlashOptions o;
  o.cu_seqlens_q = cu_q;
  o.cu_seqlens_k = cu_k;
  FlashBackwardTensors b{c.t.q, c.t.k, c.t.v, c.t.o, c.t.o, c.t.q, c.t.k, c.t.v, c.t.lse};
  const std::string forward = flash_forward_error(kFa9, FlashTarget::emulated, c.t, o);
  // The backward checks the same offsets with the same message.
  EXPECT_EQ(flash_backward_error(kFa9, FlashTarget::emulated, b, o), forward);
  return forward;
}

TEST(FlashValidate, PackedOffsetsThatFitTheTensorsAreAccepted) {
  Call c(64);
  EXPECT_EQ(packed_error(c, {0, 16}, {0, 32}), "");
  EXPECT_EQ(packed_error(c, {0, 0, 5, 5, 16}, {0, 3, 3, 32, 32}), "");  // empty sequences on either side
}

TEST(FlashValidate, EachBadPackedOffsetHasItsMessage) {
  Call c(64);
  EXPECT_EQ(packed_error(c, {0, 16}, {}), "fa9: cu_seqlens_q and cu_seqlens_k must be given together (got 2 and 0 offsets)");
  EXPECT_EQ(packed_error(c, {}, {0, 32}), "fa9: cu_seqlens_q and cu_seqlens_k must be given together (got 0 and 2 offsets)");
  EXPECT_EQ(packed_error(c, {0, 8, 16}, {0, 32}), "fa9: cu_seqlens_q and cu_seqlens_k must have the same count (got 3 and 2)");
  EXPECT_EQ(packed_error(c, {16}, {32}), "fa9: cu_seqlens_q must hold at least 2 offsets (got 1)");
  EXPECT_EQ(packed_error(c, {1, 16}, {0, 32}), "fa9: cu_seqlens_q must start at 0 (got 1)");
  EXPECT_EQ(packed_error(c, {0, 16}, {-1, 32}), "fa9: cu_seqlens_k must start at 0 (got -1)");
  EXPECT_EQ(packed_error(c, {0, 9, 8, 16}, {0, 1, 2, 32}), "fa9: cu_seqlens_q must be non-decreasing (offset 2 is 8 after 9)");
  EXPECT_EQ(packed_error(c, {0, 8, 16}, {0, 40, 32}), "fa9: cu_seqlens_k must be non-decreasing (offset 2 is 32 after 40)");
  EXPECT_EQ(packed_error(c, {0, 15}, {0, 32}), "fa9: cu_seqlens_q must end at q's seqlen (16), got 15");
  EXPECT_EQ(packed_error(c, {0, 16}, {0, 33}), "fa9: cu_seqlens_k must end at k's seqlen (32), got 33");
  std::vector<std::int32_t> many(65537, 16), many_k(65537, 32);
  many[0] = many_k[0] = 0;
  EXPECT_EQ(packed_error(c, many, many_k), "fa9: packed batches must have at most 65535 sequences (got 65536)");
  many.pop_back(), many_k.pop_back();  // 65535 sequences
  EXPECT_EQ(packed_error(c, many, many_k), "");
}

TEST(FlashValidate, PackedBatchNeedsTensorsOfBatchOne) {
  Call c(64);
  for (FlashTensor* t : {&c.t.q, &c.t.k, &c.t.v, &c.t.o}) t->sizes[0] = 2, t->sizes[1] /= 2;
  EXPECT_EQ(packed_error(c, {0, 8}, {0, 16}), "fa9: a packed batch needs tensors of batch 1 (q has batch 2)");
}

TEST(FlashValidate, EachSequenceRunsAloneAtItsRows) {
  Call c(64);
  const std::vector<std::int32_t> cu_q = {0, 3, 3, 16}, cu_k = {0, 20, 21, 32};
  FlashOptions o;
  o.cu_seqlens_q = cu_q;
  o.cu_seqlens_k = cu_k;
  o.window_left = 5, o.window_right = 100;
  const auto sequences = packed_sequences(o);
  ASSERT_EQ(sequences.size(), 3u);
  EXPECT_EQ(sequences[2].q_begin, 3);
  EXPECT_EQ(sequences[2].seqlen_q, 13);
  EXPECT_EQ(sequences[2].k_begin, 21);
  EXPECT_EQ(sequences[2].seqlen_k, 11);
  EXPECT_EQ(longest_sequence(sequences).seqlen_q, 13);
  EXPECT_EQ(longest_sequence(sequences).seqlen_k, 20);
  EXPECT_TRUE(packed_sequences({}).empty());
  // Sequence 2 alone: batch 1, its lengths, the window clamped to them as a dense call of them.
  const FlashShape storage = make_flash_shape(FlashDtype::fp16, c.t.q, c.t.k, o);
  const FlashShape one = sequence_shape(storage, o, sequences[2]);
  EXPECT_EQ(one.batch, 1);
  EXPECT_EQ(one.seqlen_q, 13);
  EXPECT_EQ(one.seqlen_k, 11);
  EXPECT_EQ(one.window_left, 5);
  EXPECT_EQ(one.window_right, 13);
  EXPECT_EQ(one.heads_q, storage.heads_q);
  const SeqTensor k = seq_tensor(c.t.k);
  EXPECT_EQ(rows_from(k, 21).at(0, 2, 1), k.at(0, 23, 1));
  // Its slice of a sampled check's wanted rows ([heads_q = 4][16]).
  std::vector<std::uint8_t> rows(4 * 16, 0);
  rows[1 * 16 + 5] = 1;  // head 1, storage row 5: sequence 2's row 2
  o.wanted_rows = rows.data();
  const SequenceWanted w = sequence_wanted(o, storage, sequences[2]);
  ASSERT_EQ(w.rows.size(), 4u * 13u);
  EXPECT_TRUE(w.view().any_row(4, 13, 0, 1, 2, 1));
  EXPECT_FALSE(w.view().any_row(4, 13, 0, 0, 0, 13));
  EXPECT_EQ(w.view().cols, nullptr);  // all columns wanted
  // A sequence without rows wants none, rather than all.
  EXPECT_FALSE(sequence_wanted(o, storage, sequences[1]).view().any_row(4, 0, 0, 0, 0, 1));
}

}  // namespace
}  // namespace flashproof::kernels
