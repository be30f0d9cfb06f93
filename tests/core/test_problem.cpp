#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/problem.h"

namespace flashproof {
namespace {

Problem valid() {
  Problem p;
  p.batch = 2;
  p.heads_q = 6;
  p.heads_kv = 3;
  p.seqlen_q = 5;
  p.seqlen_k = 7;
  p.head_dim = 40;
  return p;
}

TEST(Problem, ValidProblemHasNoError) { EXPECT_EQ(valid().validate(), ""); }

TEST(Problem, ErrorsAreOneLineAndPrecise) {
  Problem p = valid();
  p.heads_q = 6;
  p.heads_kv = 4;
  EXPECT_EQ(p.validate(), "heads_q (6) must be a multiple of heads_kv (4)");
  p = valid();
  p.seqlen_k = 0;
  EXPECT_EQ(p.validate(), "seqlen_k (0) must be >= 1");
  p = valid();
  p.head_dim = 257;
  EXPECT_EQ(p.validate(), "head_dim (257) must be at most 256");
  p = valid();
  p.window_left = -2;
  EXPECT_EQ(p.validate(), "window (-2,-1) sides must be >= 0, or -1 for unbounded");
  p = valid();
  p.scale = std::numeric_limits<float>::infinity();
  EXPECT_EQ(p.validate(), "scale must be finite");
  p = valid();
  p.batch = std::int64_t{1} << 40;
  EXPECT_EQ(p.validate(), "Q would have more than 2^34 elements");
}

TEST(Problem, DefaultScaleIsInverseSqrtRoundedToFp32) {
  Problem p = valid();
  p.head_dim = 128;
  EXPECT_EQ(p.softmax_scale(), static_cast<float>(1.0 / std::sqrt(128.0)));
  p.scale = 0.25f;
  EXPECT_EQ(p.softmax_scale(), 0.25f);
}

TEST(Problem, GqaMapsQueryHeadsToKvHeads) {
  const Problem p = valid();  // 6 query heads over 3 kv heads
  EXPECT_EQ(p.group_size(), 2);
  EXPECT_EQ(p.kv_head(0), 0);
  EXPECT_EQ(p.kv_head(1), 0);
  EXPECT_EQ(p.kv_head(2), 1);
  EXPECT_EQ(p.kv_head(5), 2);
}

TEST(Problem, CausalIsWindowMinusOneZero) {
  Problem p = valid();
  EXPECT_FALSE(p.causal());
  EXPECT_FALSE(p.has_mask());
  p.window_right = 0;
  EXPECT_TRUE(p.causal());
  EXPECT_NE(p.describe().find("causal"), std::string::npos);
  p.window_left = 3;
  EXPECT_FALSE(p.causal());
  EXPECT_NE(p.describe().find("window=3,0"), std::string::npos);
}

}  // namespace
}  // namespace flashproof
