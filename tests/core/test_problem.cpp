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

Problem packed() {
  Problem p = valid();
  p.batch = 1;
  p.seqlen_q = 12, p.seqlen_k = 15;
  p.cu_seqlens_q = {0, 5, 5, 6, 12};
  p.cu_seqlens_k = {0, 3, 7, 7, 15};
  return p;
}

TEST(Problem, PackedOffsetsAreValidated) {
  EXPECT_EQ(packed().validate(), "");
  EXPECT_EQ(packed().sequences(), 4);
  EXPECT_EQ(packed().max_seqlen_q(), 6);
  EXPECT_EQ(packed().max_seqlen_k(), 8);
  Problem p = packed();
  p.cu_seqlens_k.clear();
  EXPECT_EQ(p.validate(), "cu_seqlens_q and cu_seqlens_k must be given together");
  p = packed();
  p.cu_seqlens_k = {0, 15};
  EXPECT_EQ(p.validate(), "cu_seqlens_q (5 offsets) and cu_seqlens_k (2) must describe as many sequences");
  p = packed();
  p.batch = 2;
  EXPECT_EQ(p.validate(), "a packed batch is stored as batch 1 (cu_seqlens_q/k give its sequences), not 2");
  p = packed();
  p.cu_seqlens_q = {2, 5, 5, 6, 12};
  EXPECT_EQ(p.validate(), "cu_seqlens_q must start at 0, not 2");
  p = packed();
  p.cu_seqlens_k = {0, 3, 7, 5, 15};
  EXPECT_EQ(p.validate(), "cu_seqlens_k must not decrease (offset 3 is 5 after 7)");
  p = packed();
  p.cu_seqlens_q = {0, 5, 5, 6, 10};
  EXPECT_EQ(p.validate(), "cu_seqlens_q must end at seqlen_q (12), not 10");
  p = packed();
  p.cu_seqlens_q = {0}, p.cu_seqlens_k = {0};
  EXPECT_EQ(p.validate(), "cu_seqlens_q must hold at least 2 offsets (0 and the total length)");
  EXPECT_EQ(packed().describe(), "fp16 b=1 hq=6 hkv=3 sq=12 sk=15 d=40 packed=4 [5/3 0/4 1/0 6/8]");
}

TEST(Problem, SoftcapAndSlopesAreValidated) {
  Problem p;
  p.heads_q = 4, p.heads_kv = 2;
  p.softcap = 30.0f;
  p.alibi_slopes = {0.5f, 0.25f, 0.125f, -1.0f};
  EXPECT_EQ(p.validate(), "");
  EXPECT_TRUE(p.score_mod());
  EXPECT_EQ(p.describe(), "fp16 b=1 hq=4 hkv=2 sq=1 sk=1 d=64 softcap=30 alibi");
  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    Problem q = p;
    q.softcap = bad;
    EXPECT_NE(q.validate().find("must be a finite number > 0 (omit it for no cap)"), std::string::npos) << bad;
  }
  Problem q = p;
  q.alibi_slopes.pop_back();
  EXPECT_EQ(q.validate(), "alibi_slopes must hold one slope per query head (4), not 3");
  q = p;
  q.alibi_slopes[2] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(q.validate(), "alibi_slopes[2] must be finite");
}

// The models' slopes (Press et al.): 2^-1 .. 2^-8 for 8 heads; for 12, those of 8 then the odd
// steps of 16 (2^-0.5, 2^-1.5, ...), as BLOOM's code builds them.
TEST(Problem, StandardAlibiSlopes) {
  const std::vector<float> eight = standard_alibi_slopes(8);
  ASSERT_EQ(eight.size(), 8u);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(eight[h], std::ldexp(1.0f, -(h + 1)));
  const std::vector<float> twelve = standard_alibi_slopes(12);
  ASSERT_EQ(twelve.size(), 12u);
  for (int h = 0; h < 8; ++h) EXPECT_EQ(twelve[h], eight[h]);
  for (int h = 0; h < 4; ++h) EXPECT_EQ(twelve[8 + h], static_cast<float>(std::exp2(-0.5 - h)));
  EXPECT_EQ(standard_alibi_slopes(1), std::vector<float>{0x1p-8f});
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
