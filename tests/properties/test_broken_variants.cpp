// The property suite must catch each deliberately broken variant of the naive baseline
// (kernels/naive: NaiveFlaw), and the property named here is the one expected to: a property
// that cannot fail on a known defect is not trusted. Every property of the suite appears here.
#include <gtest/gtest.h>

#include <string>

#include "harness/case_file.h"
#include "kernels/fa2/fa2_attention.h"
#include "kernels/flash/api.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"
#include "properties/runner.h"

namespace flashproof::properties {
namespace {

struct Expectation {
  NaiveFlaw flaw;
  const char* property;
  const char* why_contains = "";  // the part of the property expected to catch it
};

const Expectation kExpectations[] = {
    Expectation{NaiveFlaw::mask_off_by_one, "accuracy-regression"},
    Expectation{NaiveFlaw::mask_off_by_one, "prefix-independence"},
    Expectation{NaiveFlaw::missing_rescale, "accuracy-regression"},
    Expectation{NaiveFlaw::missing_rescale, "key-value-permutation"},
    Expectation{NaiveFlaw::wrong_lse, "accuracy-regression"},
    Expectation{NaiveFlaw::dk_without_group_sum, "accuracy-regression"},
    Expectation{NaiveFlaw::dk_without_group_sum, "gradient-finite-differences"},
    Expectation{NaiveFlaw::nan_on_empty_row, "differential"},
    Expectation{NaiveFlaw::nan_on_empty_row, "empty-rows"},
    Expectation{NaiveFlaw::odd_rows_reversed, "query-permutation"},
    Expectation{NaiveFlaw::alternating_order, "forward-determinism"},
    Expectation{NaiveFlaw::alternating_order, "backward-determinism"},
    Expectation{NaiveFlaw::batch_dependent_order, "batch-independence"},
    Expectation{NaiveFlaw::wrong_gqa_head, "gqa-equals-mha"},
    Expectation{NaiveFlaw::saturating_output, "value-scaling"},
    Expectation{NaiveFlaw::multiplies_masked, "memory"},
    Expectation{NaiveFlaw::packed_ignores_sequences, "packed-equals-sequences"},
    // NaN in the values of a sequence without rows reaches the others through zero weights.
    Expectation{NaiveFlaw::multiplies_masked, "packed-equals-sequences"},
    // The soft cap and ALiBi, drawn by the property for implementations that declare them.
    Expectation{NaiveFlaw::softcap_missing_derivative, "score-mod-differential"},
    Expectation{NaiveFlaw::softcap_unscaled_argument, "score-mod-differential"},
    Expectation{NaiveFlaw::alibi_top_left, "score-mod-differential"},
    Expectation{NaiveFlaw::alibi_wrong_sign, "score-mod-differential"},
    Expectation{NaiveFlaw::softcap_unscaled_argument, "softcap-infinity"},
    // A block table ignored: the pages in order give the right answer, shuffled ones another.
    Expectation{NaiveFlaw::pages_in_order, "page-order-invariance"},
    // The agreement check run with a flawed baseline in FA1's place.
    Expectation{NaiveFlaw::missing_rescale, "fa1-matches-fa2"},
    // Both halves of tile independence: the alternate's own verdict, and the shipped shapes'
    // results against the alternate's within 2x the bound.
    Expectation{NaiveFlaw::alternate_tiles_skip_rescale, "tile-independence", "naive-flawed:missing-rescale: "},
    Expectation{NaiveFlaw::shipped_tiles_skip_rescale, "tile-independence", "and alternate tiles"},
    // A flaw in the alternate tile set alone is found by the ordinary properties too: they draw
    // the alternate for a quarter of the cases (before, only tile-independence ran it).
    Expectation{NaiveFlaw::alternate_tiles_skip_rescale, "accuracy-regression"},
};

// Our FA2 kernels' broken soft cap and ALiBi (kernels::FlashScoreModFlaw, emulated) fail the
// property that draws them, as the baseline's do.
TEST(BrokenVariants, Fa2ScoreModFlawsAreCaught) {
  const Property* property = find_property("score-mod-differential");
  ASSERT_NE(property, nullptr);
  for (kernels::FlashScoreModFlaw flaw : {kernels::FlashScoreModFlaw::missing_softcap_derivative,
                                          kernels::FlashScoreModFlaw::alibi_top_left,
                                          kernels::FlashScoreModFlaw::alibi_wrong_sign}) {
    const std::unique_ptr<AttentionImpl> broken = make_fa2_attention(false, flaw);
    const PropertyRun run = run_property(*property, *broken, std::string("broken/") + broken->name(), 100);
    EXPECT_FALSE(run.passed) << broken->name() << " passed " << run.cases << " cases";
    std::cout << broken->name() << " caught after " << run.cases << " passing cases: " << run.why << "\n";
  }
}

void PrintTo(const Expectation& e, std::ostream* os) { *os << naive_flaw_name(e.flaw) << " caught by " << e.property; }

class BrokenVariants : public ::testing::TestWithParam<Expectation> {};

TEST_P(BrokenVariants, AreCaught) {
  const Expectation& e = GetParam();
  const std::unique_ptr<AttentionImpl> broken = make_naive_attention(e.flaw);
  const Property* property = find_property(e.property);
  ASSERT_NE(property, nullptr);
  // Up to 200 cases: some flaws need a particular case (an empty row, GQA, f V beyond the clamp).
  const PropertyRun run =
      run_property(*property, *broken, std::string("broken/") + naive_flaw_name(e.flaw) + "/" + e.property, 200);
  EXPECT_FALSE(run.passed) << e.property << " did not catch " << broken->name() << " in " << run.cases << " cases";
  EXPECT_NE(run.why.find(e.why_contains), std::string::npos) << run.why;
  ASSERT_TRUE(run.counterexample.has_value());
  // The saved case file names the property and reproduces the failure.
  const CaseFile saved = read_case_file(run.case_file);
  EXPECT_EQ(saved.property, e.property);
  // The case names what ran: the implementation, or its alternate tile set where that was drawn.
  const std::unique_ptr<AttentionImpl> alternate = broken->with_alternate_tiles();
  const bool ran_alternate = alternate != nullptr && saved.c.impl == alternate->name();
  EXPECT_TRUE(saved.c.impl == broken->name() || ran_alternate) << saved.c.impl;
  EXPECT_FALSE(property->check(ran_alternate ? *alternate : *broken, saved.c).holds) << run.case_file;
  EXPECT_NE(run.reproduce.find("reproduce="), std::string::npos);
  std::cout << broken->name() << " caught by " << e.property << " after " << run.cases << " passing cases: " << run.why
            << "\n";
}

// Every property has at least one flaw it must catch.
TEST(BrokenVariantsList, NamesEveryProperty) {
  for (const Property& p : all_properties()) {
    bool named = false;
    for (const Expectation& e : kExpectations) named = named || std::string(e.property) == p.name;
    EXPECT_TRUE(named) << p.name << " is not shown failing on any broken variant";
  }
}

// fa2's backward adds dQ with atomics in the order its key blocks happen to run; declared bitwise
// reproducible, backward-determinism must catch it. The emulator's default schedule adds them in
// one fixed order per host thread, so it takes the explored schedules the property runs.
class Fa2AtomicDeclaredReproducible final : public AttentionImpl {
 public:
  explicit Fa2AtomicDeclaredReproducible(AttentionImpl& fa2) : fa2_(fa2) {}
  std::string name() const override { return "fa2-atomic-declared-reproducible"; }
  std::string description() const override { return "fa2 whose atomic dQ claims to be bitwise reproducible"; }
  std::string where() const override { return fa2_.where(); }
  std::string unsupported_reason(const Problem& p, bool backward) const override {
    return fa2_.unsupported_reason(p, backward);
  }
  bool bitwise_reproducible_backward() const override { return true; }
  void forward(const Problem& p, const ForwardArgs& a) override { fa2_.forward(p, a); }
  void backward(const Problem& p, const BackwardArgs& a) override { fa2_.backward(p, a); }

 private:
  AttentionImpl& fa2_;
};

// On an explicit case: generated cases small enough for the emulator in CI rarely show it, since
// dQ is rounded to fp16 from the fp32 sums and most one-ulp differences of those vanish there.
// This one has 3 key blocks and 10240 dQ elements; the honest kernels hold on it.
TEST(BrokenVariantsSchedules, AtomicDqDeclaredReproducibleIsCaught) {
  AttentionImpl* fa2 = find_implementation("fa2");
  ASSERT_NE(fa2, nullptr);
  Fa2AtomicDeclaredReproducible broken(*fa2);
  const Property* property = find_property("backward-determinism");
  ASSERT_NE(property, nullptr);
  ASSERT_TRUE(property->applies(broken));
  Case c;
  c.problem.seqlen_q = 40;
  c.problem.seqlen_k = 300;
  c.problem.head_dim = 64;
  c.problem.heads_q = 4;
  c.problem.heads_kv = 2;
  c.seed = 5;
  c.backward = true;
  c.impl = broken.name();
  const Outcome caught = property->check(broken, c);
  EXPECT_FALSE(caught.holds);
  EXPECT_NE(caught.why.find("run under schedule "), std::string::npos) << caught.why;
  EXPECT_NE(caught.why.find("dQ not bitwise equal"), std::string::npos) << caught.why;
  // It says that the property asks for equal bits, not accuracy (a 1-ulp difference must not read as a defect).
  EXPECT_NE(caught.why.find("this property demands bitwise equality"), std::string::npos) << caught.why;
  std::cout << broken.name() << ": " << caught.why << "\n";
  // Explored schedules only, each the same on every run: the failure reproduces exactly, as a
  // replayed case file does.
  EXPECT_EQ(property->check(broken, c).why, caught.why);
  for (const char* honest : {"fa2-deterministic", "fa1"}) {
    AttentionImpl* impl = find_implementation(honest);
    ASSERT_NE(impl, nullptr);
    c.impl = honest;
    EXPECT_TRUE(property->check(*impl, c).holds) << honest << ": " << property->check(*impl, c).why;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Naive, BrokenVariants,
    ::testing::ValuesIn(kExpectations),
    [](const auto& info) {
      std::string s = std::string(naive_flaw_name(info.param.flaw)) + "__" + info.param.property;
      for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

}  // namespace
}  // namespace flashproof::properties
