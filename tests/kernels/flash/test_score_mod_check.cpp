// The soft cap and ALiBi in FA2 through the harness (label `emulated`): the certified check
// (run_check: the reference with its rigorous bounds, docs/error-bounds.md) passes fa2 and
// fa2-deterministic on capped, biased, both and packed cases, and fails each deliberately broken
// variant (make_fa2_attention(deterministic, flaw): the twins the harness's checks are held to).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/generators.h"
#include "harness/check.h"
#include "kernels/fa2/fa2_attention.h"
#include "kernels/registry.h"
#include "tests/harness/pass_or_vacuous.h"

namespace flashproof {
namespace {

using kernels::FlashScoreModFlaw;

struct ModCase {
  const char* name;
  Case c;
};

Case make_case(Problem p, const char* dist, bool backward) {
  Case c;
  c.problem = std::move(p);
  c.dist = *parse_distribution(dist);
  c.seed = 7;
  c.backward = backward;
  return c;
}

std::vector<ModCase> cases() {
  std::vector<ModCase> out;
  Problem cap;  // a cap of 2 on logits of several units: t far from 0 and 1
  cap.heads_q = cap.heads_kv = 2, cap.seqlen_q = 77, cap.seqlen_k = 133, cap.head_dim = 128;
  cap.dtype = DType::bf16, cap.window_left = 30, cap.window_right = 5, cap.softcap = 2.0f;
  out.push_back({"cap", make_case(cap, "scaled:4", true)});
  Problem both;  // len_q > len_k, causal: rows without keys; GQA
  both.heads_q = 4, both.heads_kv = 2, both.seqlen_q = 70, both.seqlen_k = 40, both.head_dim = 64;
  both.window_right = 0, both.softcap = 5.0f, both.alibi_slopes = standard_alibi_slopes(4);
  out.push_back({"both", make_case(both, "normal", true)});
  Problem alibi;  // BLOOM-like slopes, len_q != len_k, unmasked: the distance's kink inside every row
  alibi.heads_q = alibi.heads_kv = 2, alibi.seqlen_q = 40, alibi.seqlen_k = 90, alibi.head_dim = 256;
  alibi.alibi_slopes = {0.5f, 0.125f};
  out.push_back({"alibi", make_case(alibi, "normal", true)});
  Problem packed;  // each sequence's own distance
  packed.heads_q = packed.heads_kv = 2, packed.head_dim = 64, packed.window_right = 0;
  packed.cu_seqlens_q = {0, 5, 41, 58}, packed.cu_seqlens_k = {0, 9, 47, 117};
  packed.seqlen_q = 58, packed.seqlen_k = 117, packed.alibi_slopes = {0.5f, 0.25f}, packed.softcap = 3.0f;
  out.push_back({"packed", make_case(packed, "normal", true)});
  return out;
}

TEST(ScoreModCheck, Fa2PassesTheCertifiedCheck) {
  for (const char* impl : {"fa2", "fa2-deterministic"}) {
    AttentionImpl* fa2 = find_implementation(impl);
    ASSERT_NE(fa2, nullptr);
    const Support s = fa2->declared_support();
    EXPECT_TRUE(s.softcap && s.alibi) << impl;
    for (const ModCase& m : cases()) {
      const CheckRecord r = run_check(m.c, *fa2);
      EXPECT_EQ(r.impl_where, "emulated");
      EXPECT_TRUE(r.in_domain) << impl << " " << m.name << ": " << r.domain_note;
      EXPECT_TRUE(test_impls::pass_or_vacuous(r)) << impl << " " << m.name << ": " << verdict_name(r.verdict);
    }
  }
}

TEST(ScoreModCheck, EachBrokenVariantFailsTheCertifiedCheck) {
  for (const FlashScoreModFlaw flaw : {FlashScoreModFlaw::missing_softcap_derivative, FlashScoreModFlaw::alibi_top_left,
                                       FlashScoreModFlaw::alibi_wrong_sign}) {
    const std::unique_ptr<AttentionImpl> broken = make_fa2_attention(false, flaw);
    EXPECT_EQ(broken->name(), std::string("fa2~") + fa2_score_mod_flaw_name(flaw));
    for (const ModCase& m : cases()) {
      const bool applies = flaw == FlashScoreModFlaw::missing_softcap_derivative ? m.c.problem.softcap.has_value()
                                                                                : m.c.problem.alibi();
      if (!applies) continue;
      const CheckRecord r = run_check(m.c, *broken);
      EXPECT_EQ(r.verdict, Verdict::fail) << broken->name() << " on " << m.name << " was " << verdict_name(r.verdict);
    }
  }
}

// FA1 does not declare them, nor do FA2's alternate tiles.
TEST(ScoreModCheck, UndeclaredOrUnbuiltIsUnsupported) {
  AttentionImpl* fa1 = find_implementation("fa1");
  ASSERT_NE(fa1, nullptr);
  EXPECT_FALSE(fa1->declared_support().softcap || fa1->declared_support().alibi);
  AttentionImpl* fa2 = find_implementation("fa2");
  ASSERT_NE(fa2, nullptr);
  EXPECT_FALSE(fa2->with_alternate_tiles()->declared_support().softcap);
}

// Head dims whose bucket has no score-mod kernel run zero-padded in the next one that has them (the
// harness adapter, c9c6eb9): d 32 as 64, d 96 as 104 (bucket 128); the certified check passes.
TEST(ScoreModCheck, OtherHeadDimsRunPaddedAndPass) {
  AttentionImpl* fa2 = find_implementation("fa2");
  ASSERT_NE(fa2, nullptr);
  for (const std::int64_t d : {32, 96, 200}) {
    Problem p;
    p.heads_q = p.heads_kv = 2, p.seqlen_q = 33, p.seqlen_k = 50, p.head_dim = d, p.window_right = 0;
    p.softcap = 4.0f, p.alibi_slopes = {0.25f, 0.0625f};
    EXPECT_EQ(refusal(*fa2, p, true), "") << d;
    const CheckRecord r = run_check(make_case(p, "normal", true), *fa2);
    EXPECT_TRUE(test_impls::pass_or_vacuous(r)) << "d " << d << ": " << verdict_name(r.verdict);
  }
}

}  // namespace
}  // namespace flashproof
