#include "testing/implementation_tests.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "fuzz/campaign.h"
#include "harness/case_file.h"
#include "harness/check_render.h"
#include "kernels/registry.h"
#include "properties/runner.h"

namespace flashproof::testkit {
namespace {

namespace fs = std::filesystem;

// The implementation as the property searches see it: cases limited to the suite's dtypes. The
// generators draw only dtypes an implementation takes (properties::limits_for), so refusing the
// others here is what narrows them.
class DtypeSelection final : public AttentionImpl {
 public:
  DtypeSelection(AttentionImpl& inner, std::vector<DType> dtypes) : inner_(inner), dtypes_(std::move(dtypes)) {}
  std::string name() const override { return inner_.name(); }
  std::string description() const override { return inner_.description(); }
  std::string where() const override { return inner_.where(); }
  std::string unsupported_reason(const Problem& p, bool backward) const override {
    if (std::find(dtypes_.begin(), dtypes_.end(), p.dtype) == dtypes_.end())
      return std::string(dtype_name(p.dtype)) + " is not among the suite's dtypes";
    return inner_.unsupported_reason(p, backward);
  }
  bool bitwise_reproducible_backward() const override { return inner_.bitwise_reproducible_backward(); }
  Support declared_support() const override { return inner_.declared_support(); }
  ArithmeticModel arithmetic_model() const override { return inner_.arithmetic_model(); }
  GqaGradientReduction gqa_gradient_reduction() const override { return inner_.gqa_gradient_reduction(); }
  bool backward_recomputes_forward_logits() const override { return inner_.backward_recomputes_forward_logits(); }
  std::unique_ptr<AttentionImpl> with_alternate_tiles() const override { return inner_.with_alternate_tiles(); }
  void forward(const Problem& p, const ForwardArgs& a) override { inner_.forward(p, a); }
  void backward(const Problem& p, const BackwardArgs& a) override { inner_.backward(p, a); }

 private:
  AttentionImpl& inner_;
  std::vector<DType> dtypes_;
};

// Every test of every suite is this fixture running a body (GoogleTest wants one fixture class per
// suite).
class RegisteredTest : public ::testing::Test {
 public:
  explicit RegisteredTest(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

void add_test(const std::string& suite, const std::string& name, std::function<void()> body) {
  ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [body = std::move(body)]() -> ::testing::Test* { return new RegisteredTest(body); });
}

std::string test_name(const char* property) {
  std::string s = property;
  std::replace(s.begin(), s.end(), '-', '_');  // '-' starts a negative --gtest_filter pattern
  return s;
}

std::vector<DType> taken_dtypes(const AttentionImpl& impl) {
  std::vector<DType> out;
  for (DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    Problem p;
    p.dtype = t;
    fit_to_support(p, impl.declared_support());  // a dtype is asked about on a shape it declares
    if (refusal(impl, p, false).empty()) out.push_back(t);
  }
  return out;
}

// How to re-run a saved case: the `flashproof` command does not have the user's implementation.
std::string replay_hint(const std::string& suite, const std::string& case_file) {
  if (case_file.empty()) return "";
  return "\nre-run it here: FLASHPROOF_REPLAY=" + fuzz::shell_quoted(case_file) + " <this test program> --gtest_filter=" +
         suite + ".replay";
}

void property_test(const std::string& suite, const properties::Property& property, AttentionImpl& subject,
                   const SuiteOptions& options) {
  const properties::PropertyRun run =
      properties::run_property(property, subject, suite + "/" + property.name, options.property_cases, options.seed);
  std::cout << property.name << " on " << subject.name() << ": " << run.cases << " cases\n" << run.message << "\n";
  EXPECT_GT(run.cases, 0) << "a property that ran zero cases fails";
  EXPECT_TRUE(run.passed) << property.name << " (" << property.what << ") fails on " << subject.name() << ": "
                          << run.why << "\n" << run.message << replay_hint(suite, run.case_file);
}

void campaign_test(const std::string& suite, const std::string& impl, const std::vector<DType>& dtypes,
                   const SuiteOptions& options) {
  fuzz::CampaignSpec spec;
  spec.generator.seed = options.seed;
  spec.generator.dtypes = dtypes;
  spec.generator.max_seqlen = options.campaign_max_seqlen;
  spec.generator.max_work = options.campaign_max_work;
  spec.impls = {impl};
  spec.cases = options.campaign_cases;
  const std::string dir = ::testing::TempDir() + "flashproof-" + suite + "-" + std::to_string(::getpid());
  fs::remove_all(dir);
  spec.out = dir;
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(spec, progress, false);
  const std::uint64_t records =
      r.pass + r.fail + r.out_of_domain + r.not_judged + r.crash + r.pass_baseline_rule + r.fail_baseline_rule;
  std::cout << progress.str();
  ASSERT_GT(records, 0u) << impl << " ran none of the campaign's " << options.campaign_cases
                         << " cases (it does not take their shapes); records in " << dir;
  std::ostringstream saved;
  for (const std::string& f : r.failure_files) saved << "\n  " << f;
  EXPECT_EQ(r.fail + r.fail_baseline_rule + r.crash, 0u) << impl << ": " << r.fail + r.fail_baseline_rule << " failing and " << r.crash << " crashing of "
                                  << records << " cases; records in " << dir << "/cases.jsonl, shrunk cases:"
                                  << saved.str() << replay_hint(suite, r.failure_files.empty() ? "" : r.failure_files[0]);
  if (r.fail + r.crash == 0) fs::remove_all(dir);
}

// FLASHPROOF_REPLAY=FILE: a case file a failing test saved (a property's or the campaign's), re-run
// on this program's implementation, which the `flashproof` command does not have.
void replay_test(AttentionImpl& impl, const std::string& file) {
  const CaseFile cf = read_case_file(file);
  if (cf.c.impl != impl.name()) GTEST_SKIP() << file << " is a case of " << cf.c.impl << ", not of " << impl.name();
  std::cout << "case file: " << file << "\nnote: " << cf.note << "\n";
  if (!cf.property.empty()) {
    const properties::Property* property = properties::find_property(cf.property);
    ASSERT_NE(property, nullptr) << file << ": unknown property '" << cf.property << "'";
    const properties::Outcome o = property->check(impl, cf.c);
    EXPECT_TRUE(o.holds) << cf.property << " (" << property->what << ") fails on " << impl.name() << ": " << o.why;
    return;
  }
  const CheckRecord record = run_check(cf.c, impl, cf.options);
  std::cout << to_table(record);
  EXPECT_FALSE(is_failure(record.verdict)) << impl.name() << " fails the case of " << file;
}

std::set<std::string>& suites_taken() {
  static std::set<std::string> names;
  return names;
}

// The implementation the factory makes, or why there is none.
std::unique_ptr<AttentionImpl> make(const ImplementationFactory& factory) {
  if (!factory) throw std::invalid_argument("the factory is null");
  std::unique_ptr<AttentionImpl> impl;
  try {
    impl = factory();
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("the factory threw: ") + e.what());
  }
  if (!impl) throw std::invalid_argument("the factory returned no implementation");
  if (impl->name().empty()) throw std::invalid_argument("the implementation's name() is empty");
  if (find_implementation(impl->name()))
    throw std::invalid_argument("an implementation named '" + impl->name() + "' is registered; give yours another name()");
  return impl;
}

void check_options(const SuiteOptions& o) {
  if (o.property_cases < 0) throw std::invalid_argument("property_cases must be 0 or more");
  if (o.campaign_max_seqlen < 1 || o.campaign_max_work < 1)
    throw std::invalid_argument("campaign_max_seqlen and campaign_max_work must be at least 1");
  for (const std::string& name : o.skip_properties)
    if (!properties::find_property(name)) {
      std::string known;
      for (const properties::Property& p : properties::all_properties()) known += (known.empty() ? "" : ", ") + std::string(p.name);
      throw std::invalid_argument("skip_properties: no property named '" + name + "' (" + known + ")");
    }
}

std::vector<DType> suite_dtypes(const AttentionImpl& impl, const SuiteOptions& o) {
  const std::vector<DType> taken = taken_dtypes(impl);
  if (taken.empty()) throw std::invalid_argument(impl.name() + " takes none of fp16, bf16, fp32");
  if (o.dtypes.empty()) return taken;
  for (DType t : o.dtypes) {
    Problem p;
    p.dtype = t;
    fit_to_support(p, impl.declared_support());
    if (const std::string why = refusal(impl, p, false); !why.empty())
      throw std::invalid_argument("dtypes: " + impl.name() + " does not take " + std::string(dtype_name(t)) + ": " + why);
  }
  return o.dtypes;
}

void register_checked(const std::string& suite, const ImplementationFactory& factory, const SuiteOptions& options) {
  if (suite.empty() || !std::all_of(suite.begin(), suite.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; }))
    throw std::invalid_argument("the suite name must be letters, digits and '_'");
  if (suites_taken().count(suite)) throw std::invalid_argument("the suite name is taken by an earlier registration");
  check_options(options);
  std::unique_ptr<AttentionImpl> made = make(factory);
  const std::vector<DType> dtypes = suite_dtypes(*made, options);
  AttentionImpl& impl = *made;
  register_implementation(std::move(made));
  suites_taken().insert(suite);
  // Owned for the program's life, as the registry owns the implementation.
  auto subject = std::make_shared<DtypeSelection>(impl, dtypes);
  for (const properties::Property& p : properties::all_properties()) {
    const auto& skip = options.skip_properties;
    if (!p.applies(impl) || std::find(skip.begin(), skip.end(), p.name) != skip.end()) continue;
    add_test(suite, test_name(p.name), [suite, &p, subject, options] { property_test(suite, p, *subject, options); });
  }
  if (const char* file = std::getenv("FLASHPROOF_REPLAY"); file != nullptr && *file != 0)
    add_test(suite, "replay", [&impl, file = std::string(file)] { replay_test(impl, file); });
  if (options.campaign_cases > 0)
    add_test(suite, "fuzz_campaign",
             [suite, name = impl.name(), dtypes, options] { campaign_test(suite, name, dtypes, options); });
}

}  // namespace

void register_implementation_tests(const std::string& suite, const ImplementationFactory& factory,
                                   const SuiteOptions& options) {
  try {
    register_checked(suite, factory, options);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("FLASHPROOF_TEST_IMPLEMENTATION(" + suite + "): " + e.what());
  }
}

bool register_implementation_tests_or_exit(const std::string& suite, const ImplementationFactory& factory,
                                           const SuiteOptions& options) {
  try {
    register_implementation_tests(suite, factory, options);
  } catch (const std::exception& e) {
    // stdio, not std::cerr: this runs before main, possibly before the iostreams are set up.
    std::fprintf(stderr, "flashproof: %s\n", e.what());
    std::exit(2);
  }
  return true;
}

}  // namespace flashproof::testkit
