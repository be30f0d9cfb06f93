// The declared support's JSON form (harness/support_record.h): written and read back the same, and
// each malformed member refused with one line naming it.
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/support_record.h"

namespace flashproof {
namespace {

std::string refusal_of(const char* text) {
  try {
    (void)json::parse(text).get<Support>();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SupportRecord, RoundTrips) {
  Support s;
  s.dtypes = {DType::fp16, DType::bf16};
  s.head_dims = {64, 128};
  s.max_head_dim = 128;
  s.windows = false;
  s.alignment = MaskAlignment::top_left;
  s.gqa = false;
  s.backward = false;
  s.seqlen_multiple = 128;
  s.seqlen_free_up_to = 128;
  s.max_seqlen_q = 4096;
  s.max_seqlen_k = 8192;
  s.softcap = true;
  s.alibi = true;
  EXPECT_EQ(json::Value(s).get<Support>(), s);
  EXPECT_EQ(json::Value(Support{}).get<Support>(), Support{});
  EXPECT_EQ(json::parse("{}").get<Support>(), Support{});
  const Support masks = json::parse(R"({"masks": ["causal"], "mask_alignment": "top-left"})").get<Support>();
  EXPECT_FALSE(masks.unmasked);
  EXPECT_TRUE(masks.causal);
  EXPECT_FALSE(masks.windows);
  EXPECT_EQ(masks.alignment, MaskAlignment::top_left);
}

TEST(SupportRecord, RefusesWhatItCannotRead) {
  EXPECT_EQ(refusal_of(R"({"dtype": ["fp16"]})"), "support: unknown member \"dtype\"");
  EXPECT_EQ(refusal_of(R"({"dtypes": ["fp8"]})"), "support: \"dtypes\" holds \"fp8\", not one of fp16, bf16, fp32");
  EXPECT_EQ(refusal_of(R"({"dtypes": "fp16"})"), "support: \"dtypes\" must be a list");
  EXPECT_EQ(refusal_of(R"({"masks": ["sliding"]})"), "support: \"masks\" holds sliding, not one of none, causal, window");
  EXPECT_EQ(refusal_of(R"({"masks": []})"), "support: no mask kind is declared (none, causal, window)");
  EXPECT_EQ(refusal_of(R"({"seqlen_multiple": 0})"), "support: \"seqlen_multiple\" must be an integer of at least 1");
  EXPECT_EQ(refusal_of(R"({"gqa": 1})"), "support: \"gqa\" must be true or false");
  EXPECT_EQ(refusal_of(R"({"softcap": "yes"})"), "support: \"softcap\" must be true or false");
  EXPECT_EQ(refusal_of(R"({"head_dims": [512]})"), "support: declared head dim 512 is outside [1, 256]");
  EXPECT_EQ(refusal_of(R"({"mask_alignment": "left"})"),
            "support: \"mask_alignment\" must be \"bottom-right\" or \"top-left\", got left");
  EXPECT_EQ(refusal_of("[]"), "support: must be a JSON object");
}

}  // namespace
}  // namespace flashproof
