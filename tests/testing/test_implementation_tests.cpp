// FLASHPROOF_TEST_IMPLEMENTATION (testing/): its tests fail on a broken implementation, and bad
// input to it gives one line. correct_suite.cpp shows its tests pass on a correct one.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "kernels/registry.h"
#include "testing/implementation_tests.h"
#include "tests/testing/forwarding_attention.h"

namespace flashproof::testkit {
namespace {

struct ProgramRun {
  int status = -1;  // exit status, -1 when it did not exit normally
  std::string output;
};

ProgramRun run(const std::string& command) {
  ProgramRun r;
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int status = ::pclose(p);
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  return r;
}

std::size_t files_in(const std::filesystem::path& dir) {
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator(); ++it) ++n;
  return n;
}

// The tests a dropped softmax scale must fail: those that compare against the reference. The
// others (permutations, scaling, determinism, memory) hold for any scale, and do here.
TEST(BrokenImplementation, FailsTheAccuracyPropertiesAndTheCampaign) {
  const std::filesystem::path dir = ::testing::TempDir() + "broken-suite-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const ProgramRun r = run("TEST_TMPDIR=" + dir.string() + " FLASHPROOF_CASE_DIR=" + (dir / "cases").string() + " " +
                           FLASHPROOF_BROKEN_SUITE + " --gtest_filter='ScaleDroppingNaive.*' 2>&1");
  EXPECT_EQ(r.status, 1) << r.output;
  // score_mod_differential and page_order_invariance too: the broken baseline declares the soft cap,
  // ALiBi and paged KV caches (naive's support), and both hold it to the reference.
  for (const char* test : {"differential", "accuracy_regression", "gradient_finite_differences", "score_mod_differential",
                           "page_order_invariance", "fuzz_campaign"})
    EXPECT_NE(r.output.find(std::string("[  FAILED  ] ScaleDroppingNaive.") + test + " ("), std::string::npos)
        << test << " did not fail:\n" << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ]"), std::string::npos) << "the scale-independent properties should hold:\n" << r.output;
  // Each failing property left its shrunk case as a case file; the campaign its records and cases.
  EXPECT_EQ(files_in(dir / "cases"), 5u) << r.output;
  EXPECT_NE(r.output.find("failing and 0 crashing"), std::string::npos) << r.output;
  const std::string campaign = (dir / ("flashproof-ScaleDroppingNaive-")).string();
  std::size_t shrunk = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().string().rfind(campaign, 0) == 0) shrunk += files_in(entry.path() / "failures");
  EXPECT_GT(shrunk, 0u) << r.output;
  // A saved case re-runs through the helper's replay test, and fails again.
  const std::string saved = (dir / "cases" / "ScaleDroppingNaive_differential.json").string();
  EXPECT_NE(r.output.find("FLASHPROOF_REPLAY=" + saved), std::string::npos) << r.output;
  const ProgramRun replay =
      run("FLASHPROOF_REPLAY=" + saved + " " + FLASHPROOF_BROKEN_SUITE + " --gtest_filter=ScaleDroppingNaive.replay 2>&1");
  EXPECT_EQ(replay.status, 1) << replay.output;
  EXPECT_NE(replay.output.find("differential (every element within its rigorous bound"), std::string::npos) << replay.output;
  EXPECT_NE(replay.output.find("[  FAILED  ] ScaleDroppingNaive.replay ("), std::string::npos) << replay.output;
  std::filesystem::remove_all(dir);
}

TEST(Macro, ANullFactoryStopsTheProgramWithOneLine) {
  const ProgramRun r = run(std::string(FLASHPROOF_NULL_FACTORY_SUITE) + " 2>&1");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.output, "flashproof: FLASHPROOF_TEST_IMPLEMENTATION(NullFactory): the factory is null\n");
}

// An implementation that takes fp16 only.
class Fp16Only final : public AttentionImpl {
 public:
  std::string name() const override { return "fp16-only"; }
  std::string description() const override { return "test stub"; }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const Problem& p, bool) const override {
    return p.dtype == DType::fp16 ? "" : "takes fp16 only";
  }
  void forward(const Problem&, const ForwardArgs&) override {}
  void backward(const Problem&, const BackwardArgs&) override {}
};

std::string refusal(const std::string& suite, const ImplementationFactory& factory, const SuiteOptions& options = {}) {
  try {
    register_implementation_tests(suite, factory, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(registered)";
}

TEST(BadInput, GetsOneLineAndRegistersNothing) {
  const auto forwarding = [](const char* name) {
    return [name] { return std::make_unique<ForwardingAttention>(name, false); };
  };
  const std::string prefix = "FLASHPROOF_TEST_IMPLEMENTATION(Bad): ";
  EXPECT_EQ(refusal("Bad", nullptr), prefix + "the factory is null");
  EXPECT_EQ(refusal("Bad", [] { return std::unique_ptr<AttentionImpl>(); }), prefix + "the factory returned no implementation");
  EXPECT_EQ(refusal("Bad", []() -> std::unique_ptr<AttentionImpl> { throw std::runtime_error("no device"); }),
            prefix + "the factory threw: no device");
  EXPECT_EQ(refusal("Bad", forwarding("")), prefix + "the implementation's name() is empty");
  EXPECT_EQ(refusal("Bad", forwarding("naive")),
            prefix + "an implementation named 'naive' is registered; give yours another name()");
  EXPECT_EQ(refusal("Bad-name", forwarding("x")),
            "FLASHPROOF_TEST_IMPLEMENTATION(Bad-name): the suite name must be letters, digits and '_'");
  SuiteOptions bf16;
  bf16.dtypes = {DType::bf16};
  EXPECT_EQ(refusal("Bad", [] { return std::make_unique<Fp16Only>(); }, bf16),
            prefix + "dtypes: fp16-only does not take bf16: takes fp16 only");
  SuiteOptions negative;
  negative.property_cases = -1;
  EXPECT_EQ(refusal("Bad", forwarding("x"), negative), prefix + "property_cases must be 0 or more");
  SuiteOptions misspelt;
  misspelt.skip_properties = {"differentail"};
  const std::string unknown = refusal("Bad", forwarding("x"), misspelt);
  EXPECT_EQ(unknown.rfind(prefix + "skip_properties: no property named 'differentail' (differential, ", 0), 0u) << unknown;
  EXPECT_EQ(unknown.find('\n'), std::string::npos);
  EXPECT_EQ(find_implementation("x"), nullptr) << "a refused registration registers nothing";
}

}  // namespace
}  // namespace flashproof::testkit
