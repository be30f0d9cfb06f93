#include <gtest/gtest.h>

#include <stdexcept>

#include "core/tensor.h"

namespace flashproof {
namespace {

TEST(HostTensor, ContiguousLayoutAndRoundingOnWrite) {
  HostTensor t(DType::fp16, {2, 3, 4, 5});
  EXPECT_EQ(t.strides(), (Shape{60, 20, 5, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 120);
  t.set(1, 2, 3, 4, 1.0 + 0x1p-11);  // a tie: rounds to even (1.0)
  EXPECT_EQ(t.get(1, 2, 3, 4), 1.0);
  t.set(1, 2, 3, 4, 1.0 + 0x1p-10);
  EXPECT_EQ(t.get(1, 2, 3, 4), 1.0 + 0x1p-10);
  EXPECT_EQ(t.bits(1, 2, 3, 4), 0x3C01u);
}

TEST(HostTensor, ViewsShareStorageAndHonourStrides) {
  // A packed QKV tensor [b=1, s=4, 3, h=2, d=3] and its K slice as a [1, 4, 2, 3] view.
  HostTensor packed(DType::fp32, {1, 4, 3 * 2, 3});
  for (std::int64_t s = 0; s < 4; ++s)
    for (std::int64_t w = 0; w < 6; ++w)
      for (std::int64_t c = 0; c < 3; ++c) packed.set(0, s, w, c, 100 * s + 10 * w + c);
  const HostTensor k = packed.view({1, 4, 2, 3}, {72, 18, 3, 1}, 6);
  EXPECT_FALSE(k.is_contiguous());
  EXPECT_EQ(k.get(0, 2, 1, 2), 100 * 2 + 10 * 3 + 2);  // slot 1 of the K third is column 3
  const HostTensor copy = k.contiguous_copy();
  EXPECT_TRUE(copy.is_contiguous());
  EXPECT_EQ(copy.get(0, 3, 0, 1), k.get(0, 3, 0, 1));
  // A transposed view: swapping the head and sequence axes of a contiguous tensor.
  HostTensor t(DType::bf16, {1, 3, 2, 4});
  const HostTensor tr = t.view({1, 2, 3, 4}, {24, 4, 8, 1}, 0);
  t.set(0, 2, 1, 3, 5.0);
  EXPECT_EQ(tr.get(0, 1, 2, 3), 5.0);
}

TEST(HostTensor, ViewsOutsideTheStorageAreRejected) {
  HostTensor t(DType::fp16, {1, 2, 2, 2});
  EXPECT_THROW(t.view({1, 2, 2, 3}, {8, 4, 2, 1}, 0), std::invalid_argument);
  EXPECT_THROW(t.view({1, 1, 1, 1}, {0, 0, 0, 0}, -1), std::invalid_argument);
  EXPECT_NO_THROW(t.view({1, 1, 1, 1}, {0, 0, 0, 0}, 7));
}

TEST(HostTensor, PoisonFillsTheWholeStorage) {
  HostTensor t(DType::fp16, {1, 2, 2, 2});
  t.fill_storage_bits(0x7E01);
  for (std::int64_t i = 0; i < t.storage_elements(); ++i) EXPECT_EQ(t.raw_bits(i), 0x7E01u);
}

}  // namespace
}  // namespace flashproof
