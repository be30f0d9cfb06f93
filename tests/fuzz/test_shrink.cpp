// Shrinking keeps the failure it was given (fuzz/failure_signature.h, fuzz/shrink.h): a shrunk case
// fails the same tensor by the same rule as the original (its first failing tensor in the order O,
// LSE, dQ, dK, dV, and that tensor's first rule), and a crash shrinks only to a crash of the same
// kind. Each shrink has a twin under the rule before, the status alone, which adopts another
// defect from the same original: were shrink_case's rule the status again, these tests would fail.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "fuzz/campaign_spec.h"
#include "fuzz/case_runner.h"
#include "fuzz/child_process.h"
#include "fuzz/failure_signature.h"
#include "core/kv_cache.h"
#include "fuzz/shrink.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"
#include "tests/harness/broken_impl.h"

namespace flashproof::fuzz {
namespace {
namespace fs = std::filesystem;

constexpr double kTimeout = 60;

std::string scratch(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / ("shrink_" + name + "_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return (d / "child").string();
}

// The rule before: any candidate with the original's status.
AdoptRule status_only(const CaseOutcome& original) {
  return [status = original.status](const CaseOutcome& o) { return o.status == status; };
}

// ---- the rules, read from the check's own words ----

// The words check_tensor (harness/verdict.cpp) gives each rule's reason.
const char* reason_words(FailureRule r) {
  switch (r) {
    case FailureRule::outside_envelope: return "outside the bound-free envelope";
    case FailureRule::finite_beyond_range: return "finite values where the exact";
    case FailureRule::nonfinite_reference: return "reference values are not finite";
    case FailureRule::nan: return "NaN where the reference is not NaN";
    case FailureRule::inf: return "inf/finite mismatches";
    case FailureRule::above_rigorous_bound: return "above the rigorous bound";
    case FailureRule::loose_reference: return "reference bound not far below the tolerance";
    case FailureRule::nothing_compared: return "no element was compared";
    case FailureRule::other: return "";
  }
  return "";
}

// A fail's (tensor, rule) pairs read from its record's reasons (the text), not from its counts
// (which failure_signature reads): the two must agree, reason for reason.
std::vector<TensorFailure> failures_from_reasons(const json::Value& record) {
  std::vector<TensorFailure> out;
  for (const char* name : {"O", "LSE", "dQ", "dK", "dV"})
    for (const json::Value& t : record.at("tensors")) {
      if (t.at("name").get<std::string>() != name) continue;
      for (const json::Value& reason : t.at("reasons")) {
        const std::string text = reason.get<std::string>();
        FailureRule found = FailureRule::other;
        for (FailureRule r : {FailureRule::outside_envelope, FailureRule::finite_beyond_range, FailureRule::nonfinite_reference,
                              FailureRule::nan, FailureRule::inf, FailureRule::above_rigorous_bound,
                              FailureRule::loose_reference, FailureRule::nothing_compared})
          if (text.find(reason_words(r)) != std::string::npos) found = r;
        out.push_back({name, found});
      }
    }
  return out;
}

std::string text(const std::vector<TensorFailure>& fs) {
  std::string s;
  for (const TensorFailure& f : fs) s += (s.empty() ? "" : ", ") + f.tensor + ": " + failure_rule_name(f.rule);
  return s;
}

// Whether the case, checked afresh (in this process, not through the shrinker's child), fails
// tensor f.tensor with a reason of rule f.rule.
bool fails_by(const Case& c, const CheckOptions& options, const TensorFailure& f) {
  const CheckRecord r = run_check(c, options);
  for (const TensorCheck& t : r.tensors)
    if (t.name == f.tensor && t.verdict == Verdict::fail)
      for (const std::string& reason : t.reasons)
        if (reason.find(reason_words(f.rule)) != std::string::npos) return true;
  return false;
}

// ---- deliberately broken implementations with two defects ----

// The naive baseline with two defects (tests/harness/broken_impl.h): O's first element NaN once a
// row has three keys or more (a partial-block NaN, say), and a second defect present at every size.
// Shrinking the keys to one keeps only the second: the status (fail) stays, the defect does not.
void register_two_defects() {
  using test_impls::register_broken;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const auto o_nan = [nan](const Problem& p, ForwardArgs& a) {
    if (p.seqlen_k >= 3) a.o.set(0, 0, 0, 0, nan);
  };
  // The same tensor by another rule: O's last element inf at every size.
  register_broken("test-o-nan-and-o-inf", "naive", ArithmeticModel::naive, [=](const Problem& p, ForwardArgs& a) {
    o_nan(p, a);
    a.o.set(p.batch - 1, p.seqlen_q - 1, p.heads_q - 1, p.head_dim - 1, inf);
  });
  // Another tensor: dK's first element inf at every size (a forward NaN shrunk to a backward inf).
  register_broken("test-o-nan-and-dk-inf", "naive", ArithmeticModel::naive, o_nan,
                  [=](const Problem&, BackwardArgs& a) { a.dk.set(0, 0, 0, 0, inf); });
}

Case two_defect_case(const std::string& impl, bool backward) {
  Case c;
  c.impl = impl;
  c.backward = backward;
  c.problem.batch = 2;
  c.problem.heads_q = 2;
  c.problem.heads_kv = 1;
  c.problem.seqlen_q = 5;
  c.problem.seqlen_k = 8;
  c.problem.head_dim = 8;
  c.seed = 5;
  return c;
}

struct TwinCase {
  const char* impl;
  bool backward;
  const char* other;  // what the status-only twin ends with
};

TEST(Shrink, KeepsTheTensorAndTheRuleWhereTheStatusAloneAdoptsAnotherDefect) {
  register_two_defects();
  const std::string s = scratch("two_defects");
  for (const TwinCase& tc : {TwinCase{"test-o-nan-and-o-inf", false, "O: inf"}, TwinCase{"test-o-nan-and-dk-inf", true, "dK: inf"}}) {
    SCOPED_TRACE(tc.impl);
    const Case c = two_defect_case(tc.impl, tc.backward);
    const CaseOutcome original = run_case_isolated(c, {}, s, kTimeout);
    ASSERT_EQ(original.status, CaseStatus::fail);
    const FailureTarget target = failure_target(original);
    ASSERT_EQ(describe(target), "O: nan") << original.why;
    EXPECT_EQ(original.why.substr(0, 3), "O: ");  // the target is the reason the record gives

    const ShrinkResult kept = shrink_case(c, original, {}, s, kTimeout);
    EXPECT_GT(kept.adopted, 0);
    EXPECT_EQ(kept.c.problem.seqlen_k, 3);  // the fewest keys with the NaN
    // One of everything else (but head dims of 1 and 2 both: with one, O's last element is its first).
    EXPECT_EQ(kept.c.problem.batch * kept.c.problem.heads_q * kept.c.problem.seqlen_q, 1);
    EXPECT_TRUE(keeps_failure(target, kept.outcome)) << kept.outcome.why;
    EXPECT_TRUE(fails_by(kept.c, {}, *target.tensor));

    // The twin: the status alone shrinks to one key, where O has no NaN and only the other
    // defect fails.
    const ShrinkResult before = shrink_case(c, original, {}, s, kTimeout, 60, 300, status_only(original));
    EXPECT_EQ(before.outcome.status, CaseStatus::fail);
    EXPECT_EQ(before.c.problem.seqlen_k, 1);
    EXPECT_FALSE(keeps_failure(target, before.outcome)) << before.outcome.why;
    EXPECT_FALSE(fails_by(before.c, {}, *target.tensor));
    EXPECT_EQ(describe(failure_target(before.outcome)), tc.other);
  }
}

// A packed failure shrinks by sequences (fuzz/shrink.cpp): the dense length candidates leave a
// packed problem invalid, so without the packed ones its six sequences would stay. Rows seeing
// other sequences' keys need two sequences to show, so it ends at two, each a row or two long.
TEST(Shrink, APackedFailureShrinksToFewerShorterSequences) {
  static const bool registered = [] {
    register_implementation(make_naive_attention(NaiveFlaw::packed_ignores_sequences));
    return true;
  }();
  (void)registered;
  Case c;
  c.impl = "naive-flawed:packed-ignores-sequences";
  Problem& p = c.problem;
  p.head_dim = 8;
  p.cu_seqlens_q = {0, 5, 5, 9, 10, 17, 19};
  p.cu_seqlens_k = {0, 3, 5, 9, 10, 16, 16};
  p.seqlen_q = 19, p.seqlen_k = 16;
  c.seed = 3;
  const std::string s = scratch("packed");
  const CaseOutcome original = run_case_isolated(c, {}, s, kTimeout);
  ASSERT_EQ(original.status, CaseStatus::fail) << original.why;
  const ShrinkResult kept = shrink_case(c, original, {}, s, kTimeout, 200, 300);
  EXPECT_GT(kept.adopted, 0);
  EXPECT_EQ(kept.c.problem.sequences(), 2) << kept.c.problem.describe();
  if (std::getenv("FP_SHRINK_TEST_VERBOSE")) std::printf("%s -> %s\n", p.describe().c_str(), kept.c.problem.describe().c_str());
  EXPECT_LE(kept.c.problem.seqlen_q + kept.c.problem.seqlen_k, 8) << kept.c.problem.describe();
  EXPECT_TRUE(keeps_failure(failure_target(original), kept.outcome)) << kept.outcome.why;
}

// A KV-cache failure shrinks by sequences, used lengths, capacity and pages (fuzz/shrink.cpp): the
// dense candidates leave a cache invalid. A later sequence's rows never written need two sequences.
TEST(Shrink, AKvCacheFailureShrinksToFewerShorterSequences) {
  static const bool registered = [] {
    register_implementation(make_naive_attention(NaiveFlaw::later_sequences_unwritten));
    return true;
  }();
  (void)registered;
  Case c;
  c.impl = "naive-flawed:later-sequences-unwritten";
  Problem& p = c.problem;
  p.head_dim = 8, p.batch = 4, p.seqlen_q = 3, p.seqlen_k = 128;
  p.cache_seqlens = {40, 0, 100, 17};
  p.page_size = 32, p.num_pages = 16;
  p.block_table = page_table(4, 4, 16, 5);
  c.seed = 3;
  const std::string s = scratch("kv_cache");
  const CaseOutcome original = run_case_isolated(c, {}, s, kTimeout);
  ASSERT_EQ(original.status, CaseStatus::fail) << original.why;
  const ShrinkResult kept = shrink_case(c, original, {}, s, kTimeout, 200, 300);
  const Problem& q = kept.c.problem;
  EXPECT_EQ(q.batch, 2) << q.describe();
  EXPECT_FALSE(q.paged()) << q.describe();
  EXPECT_LE(q.seqlen_k, 2) << q.describe();
  EXPECT_TRUE(keeps_failure(failure_target(original), kept.outcome)) << kept.outcome.why;
}

// ---- crashes ----

// Dies by a segfault for seqlen_q > 3 and throws (what the emulator does for a divergent barrier)
// for seqlen_q 2 and 3: two defects, both crashes.
class SegfaultOrThrow final : public AttentionImpl {
 public:
  std::string name() const override { return "test-segfault-or-throw"; }
  std::string description() const override { return "segfaults for seqlen_q > 3, throws for 2 and 3"; }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const Problem& p, bool b) const override { return base_->unsupported_reason(p, b); }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  void forward(const Problem& p, const ForwardArgs& a) override {
    if (p.seqlen_q > 3) std::raise(SIGSEGV);
    if (p.seqlen_q > 1) throw std::runtime_error("emulator: barrier divergence in block (0,0,0)");
    base_->forward(p, a);
  }
  void backward(const Problem& p, const BackwardArgs& a) override { base_->backward(p, a); }

 private:
  std::unique_ptr<AttentionImpl> base_ = make_naive_attention();
};

// Throws for seqlen_q > 3, naming the block (the row count), and supports head dims of 2 or more
// only: a candidate with head dim 1 ends as the harness's refusal, also an exception.
class ThrowsAndRefuses final : public AttentionImpl {
 public:
  std::string name() const override { return "test-throws-and-refuses"; }
  std::string description() const override { return "throws for seqlen_q > 3; head_dim >= 2"; }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const Problem& p, bool b) const override {
    if (p.head_dim < 2) return "head_dim " + std::to_string(p.head_dim) + " is below 2";
    return base_->unsupported_reason(p, b);
  }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  void forward(const Problem& p, const ForwardArgs& a) override {
    if (p.seqlen_q > 3)
      throw std::runtime_error("emulator: barrier divergence in block (" + std::to_string(p.seqlen_q) + ",0,0)");
    base_->forward(p, a);
  }
  void backward(const Problem& p, const BackwardArgs& a) override { base_->backward(p, a); }

 private:
  std::unique_ptr<AttentionImpl> base_ = make_naive_attention();
};

void register_crashing() {
  if (!find_implementation("test-segfault-or-throw")) register_implementation(std::make_unique<SegfaultOrThrow>());
  if (!find_implementation("test-throws-and-refuses")) register_implementation(std::make_unique<ThrowsAndRefuses>());
}

TEST(Shrink, ASegfaultShrinksOnlyToASegfault) {
  register_crashing();
  const std::string s = scratch("segfault");
  Case c = two_defect_case("test-segfault-or-throw", false);
  const CaseOutcome original = run_case_isolated(c, {}, s, kTimeout);
  ASSERT_EQ(original.status, CaseStatus::crash);
  const FailureTarget target = failure_target(original);
  ASSERT_TRUE(target.crash);
  // The segfault's own kind (signal 11; under AddressSanitizer its handler's end), never the exception's.
  EXPECT_NE(target.crash->kind, CrashKind::exception) << original.why;

  const ShrinkResult kept = shrink_case(c, original, {}, s, kTimeout);
  EXPECT_EQ(kept.c.problem.seqlen_q, 4);
  EXPECT_TRUE(keeps_failure(target, kept.outcome)) << kept.outcome.why;

  const ShrinkResult before = shrink_case(c, original, {}, s, kTimeout, 60, 300, status_only(original));
  EXPECT_EQ(before.outcome.status, CaseStatus::crash);
  EXPECT_EQ(before.c.problem.seqlen_q, 2);  // the exception, another defect
  EXPECT_EQ(failure_target(before.outcome).crash->kind, CrashKind::exception) << before.outcome.why;
  EXPECT_FALSE(keeps_failure(target, before.outcome));
}

TEST(Shrink, AnExceptionShrinksOnlyToTheSameException) {
  register_crashing();
  const std::string s = scratch("exception");
  Case c = two_defect_case("test-throws-and-refuses", false);
  const CaseOutcome original = run_case_isolated(c, {}, s, kTimeout);
  ASSERT_EQ(original.status, CaseStatus::crash);
  const FailureTarget target = failure_target(original);
  EXPECT_EQ(describe(target), "crash: exception (emulator: barrier divergence in block (,,))") << original.why;

  // Another block's divergence is the same exception; the harness's refusal of head dim 1 is not.
  const ShrinkResult kept = shrink_case(c, original, {}, s, kTimeout);
  EXPECT_EQ(kept.c.problem.seqlen_q, 4);
  EXPECT_EQ(kept.c.problem.head_dim, 2);
  EXPECT_TRUE(keeps_failure(target, kept.outcome)) << kept.outcome.why;

  const ShrinkResult before = shrink_case(c, original, {}, s, kTimeout, 60, 300, status_only(original));
  EXPECT_EQ(before.c.problem.head_dim, 1);
  EXPECT_NE(before.outcome.why.find("does not support this case"), std::string::npos) << before.outcome.why;
  EXPECT_FALSE(keeps_failure(target, before.outcome));
}

// The kinds read from the child's end (fuzz/child_process.cpp's words).
TEST(FailureSignature, TellsTheCrashKindsApart) {
  const std::string s = scratch("kinds");
  const auto kind_of = [&](const std::function<std::string()>& work, double timeout) {
    const CaseOutcome o = outcome_of(run_isolated(work, s, timeout));
    EXPECT_EQ(o.status, CaseStatus::crash);
    return describe(failure_target(o));
  };
  EXPECT_EQ(kind_of([]() -> std::string { std::raise(SIGUSR1); return ""; }, 10), "crash: signal " + std::to_string(SIGUSR1));
  EXPECT_EQ(kind_of([]() -> std::string { std::this_thread::sleep_for(std::chrono::seconds(10)); return ""; }, 0.2), "crash: timeout");
  EXPECT_EQ(kind_of([]() -> std::string { throw std::runtime_error("race at 0x7f12ab in block 3"); }, 10),
            "crash: exception (race at  in block )");
  EXPECT_EQ(kind_of([]() -> std::string { ::_exit(7); }, 10), "crash: exit-status 7");
  EXPECT_EQ(kind_of([]() -> std::string { return "not an answer"; }, 10), "crash: no-answer");
}

// A record written before errors.loose_reference existed reads as one without such elements.
TEST(FailureSignature, ReadsARecordWrittenBeforeLooseReference) {
  register_two_defects();
  const CaseOutcome now = run_case_isolated(two_defect_case("test-o-nan-and-dk-inf", true), {}, scratch("old_record"), kTimeout);
  ASSERT_EQ(now.status, CaseStatus::fail);
  CaseOutcome before = now;
  int erased = 0;
  for (json::Value& t : before.record.at("tensors")) erased += static_cast<int>(t.at("errors").erase("loose_reference"));
  EXPECT_EQ(erased, 5);
  EXPECT_EQ(text(failure_signature(before).failures), text(failure_signature(now).failures));
  EXPECT_EQ(text(failure_signature(now).failures), text(failures_from_reasons(now.record)));
  EXPECT_TRUE(keeps_failure(failure_target(now), before));
}

// ---- every shrunk failure of the flawed variants ----

// The flawed baselines (kernels/naive/naive_attention.h) whose defects a short campaign finds, and
// the two-defect implementations above: each one's first failing campaign cases are shrunk, and
// every shrunk case, checked afresh, fails the original's first failing tensor by its rule.
TEST(Shrink, EveryShrunkCaseOfTheFlawedVariantsFailsItsTensorByItsRule) {
  register_two_defects();
  const std::string s = scratch("variants");
  CampaignSpec spec;
  spec.generator.seed = 77;
  spec.generator.max_seqlen = 24;
  spec.generator.max_work = 1 << 12;
  const std::vector<std::string> impls = {
      "naive-flawed:mask-off-by-one", "naive-flawed:wrong-lse",      "naive-flawed:dk-without-group-sum",
      "naive-flawed:nan-on-empty-row", "naive-flawed:wrong-gqa-head", "naive-flawed:saturating-output",
      "naive-flawed:missing-rescale",  "test-o-nan-and-o-inf",        "test-o-nan-and-dk-inf"};
  int shrunk = 0, kept = 0, twins = 0, lost_by_status_only = 0;
  std::set<std::string> targets;
  for (const std::string& impl : impls) {
    if (!find_implementation(impl)) register_implementation(make_flawed_naive(impl));
    int found = 0;
    for (std::uint64_t index = 0; index < 32 && found < 2; ++index) {
      const Case c = campaign_case(spec, index, impl);
      const CheckOptions options = campaign_check_options(spec, c);
      const CaseOutcome original = run_case_isolated(c, options, s, kTimeout);
      if (original.status != CaseStatus::fail) continue;
      ++found;
      // The counts and the reasons say the same, rule for rule.
      EXPECT_EQ(text(failure_signature(original).failures), text(failures_from_reasons(original.record))) << impl;
      const FailureTarget target = failure_target(original);
      ASSERT_TRUE(target.tensor) << impl;
      targets.insert(describe(target));
      const ShrinkResult r = shrink_case(c, original, options, s, kTimeout, 40);
      ++shrunk;
      EXPECT_EQ(text(failure_signature(r.outcome).failures), text(failures_from_reasons(r.outcome.record))) << impl;
      const bool same = keeps_failure(target, r.outcome) && fails_by(r.c, options, *target.tensor);
      kept += same;
      // FP_SHRINK_TEST_VERBOSE=1: one line per shrunk failure (its target, the case before and after).
      if (std::getenv("FP_SHRINK_TEST_VERBOSE"))
        std::printf("%s case %llu: %s (%s) -> %s: %s\n", impl.c_str(), static_cast<unsigned long long>(index),
                    describe(target).c_str(), c.problem.describe().c_str(), r.c.problem.describe().c_str(), r.outcome.why.c_str());
      EXPECT_TRUE(same) << impl << " case " << index << ": " << describe(target) << " shrunk to "
                        << r.c.problem.describe() << ": " << r.outcome.why;
      // The twin, for the implementations with two defects: the status alone loses the target.
      if (impl.rfind("test-", 0) == 0) {
        const ShrinkResult b = shrink_case(c, original, options, s, kTimeout, 40, 300, status_only(original));
        ++twins;
        lost_by_status_only += !keeps_failure(target, b.outcome);
      }
    }
    EXPECT_GT(found, 0) << impl << ": no failure in the first cases";
  }
  EXPECT_EQ(kept, shrunk);  // 100%
  EXPECT_GE(targets.size(), 3u) << "too few kinds of failure to show anything";
  EXPECT_GT(twins, 0);
  EXPECT_EQ(lost_by_status_only, twins);  // each of them adopted the other defect
}

}  // namespace
}  // namespace flashproof::fuzz
