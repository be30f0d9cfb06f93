// A campaign over an implementation that declares what it computes (core/support.h): every case
// it is handed lies inside the declaration (drawn, then fitted, counted), none is dropped, and a
// case it refuses when it runs is unsupported, never a crash record.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <unistd.h>

#include "core/json.h"
#include "fuzz/campaign.h"
#include "fuzz/case_generator.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"

namespace flashproof::fuzz {
namespace {
namespace fs = std::filesystem;

Support declared() {
  Support s;
  s.windows = false;
  s.gqa = false;
  s.seqlen_multiple = 16;
  s.seqlen_free_up_to = 16;
  return s;
}

// The naive baseline behind a declaration it enforces: a case outside it throws, which a campaign
// records as a crash. `refuse_long`: it also refuses seqlen_k > 24 when it runs.
class Declaring final : public AttentionImpl {
 public:
  Declaring(std::string name, bool refuse_long) : name_(std::move(name)), refuse_long_(refuse_long), base_(make_naive_attention()) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "naive behind a declared support"; }
  std::string where() const override { return "host"; }
  Support declared_support() const override { return declared(); }
  std::string unsupported_reason(const Problem& p, bool b) const override { return base_->unsupported_reason(p, b); }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  void forward(const Problem& p, const ForwardArgs& a) override {
    enforce(p, false);
    base_->forward(p, a);
  }
  void backward(const Problem& p, const BackwardArgs& a) override {
    enforce(p, true);
    base_->backward(p, a);
  }

 private:
  void enforce(const Problem& p, bool backward) const {
    if (const std::string e = unsupported_by(declared(), p, backward); !e.empty())
      throw std::logic_error("handed a case outside the declared support: " + e);
    if (refuse_long_ && p.seqlen_k > 24) throw RefusedAtRunTime("seqlen_k above 24");
  }
  std::string name_;
  bool refuse_long_;
  std::unique_ptr<AttentionImpl> base_;
};

void register_once() {
  static const bool done = [] {
    register_implementation(std::make_unique<Declaring>("test-declaring", false));
    register_implementation(std::make_unique<Declaring>("test-declaring-refusing", true));
    return true;
  }();
  (void)done;
}

CampaignSpec spec(const std::string& impl, const std::string& dir_name) {
  CampaignSpec s;
  s.generator.seed = 91;
  s.generator.max_seqlen = 40;
  s.generator.max_work = 1 << 14;
  s.generator.direction = GeneratorSettings::Direction::forward;
  s.impls = {impl};
  s.cases = 16;
  const fs::path d = fs::path(testing::TempDir()) / ("support_" + dir_name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  s.out = d.string();
  return s;
}

std::vector<json::Value> records(const CampaignSpec& s) {
  std::vector<json::Value> out;
  std::ifstream in(fs::path(s.out) / "cases.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST(DeclaredSupport, CampaignCasesAreFittedNotDropped) {
  register_once();
  const CampaignSpec s = spec("test-declaring", "fitted");
  // Not vacuous: the generator draws cases outside the declaration, which the implementation
  // would turn into crash records.
  int outside = 0;
  for (std::uint64_t i = 0; i < *s.cases; ++i)
    outside += !unsupported_by(declared(), generate_case(s.generator, i).c.problem, false).empty();
  ASSERT_GT(outside, 0);
  std::ostringstream quiet;
  const CampaignResult r = run_campaign(s, quiet, false);
  EXPECT_EQ(r.run, *s.cases);  // none dropped
  EXPECT_EQ(r.crash, 0u);
  EXPECT_TRUE(r.unsupported.empty());
  ASSERT_EQ(r.fitted.count("test-declaring"), 1u);
  EXPECT_EQ(r.fitted.at("test-declaring"), static_cast<std::uint64_t>(outside));
  for (const json::Value& rec : records(s)) {
    const json::Value& c = *json::find(rec, "case");
    Problem p;
    for (auto [field, member] : {std::pair{"seqlen_q", &Problem::seqlen_q}, {"seqlen_k", &Problem::seqlen_k},
                                 {"heads_q", &Problem::heads_q}, {"heads_kv", &Problem::heads_kv},
                                 {"head_dim", &Problem::head_dim}, {"window_left", &Problem::window_left},
                                 {"window_right", &Problem::window_right}})
      p.*member = c.at(field).get<std::int64_t>();
    EXPECT_EQ(unsupported_by(declared(), p, false), "") << p.describe();
  }
}

TEST(DeclaredSupport, ARefusalAtRunTimeIsUnsupportedNotACrash) {
  register_once();
  const CampaignSpec s = spec("test-declaring-refusing", "refused");
  int long_keys = 0;
  for (std::uint64_t i = 0; i < *s.cases; ++i) long_keys += campaign_case(s, i, "test-declaring-refusing").problem.seqlen_k > 24;
  ASSERT_GT(long_keys, 0);
  ASSERT_LT(long_keys, static_cast<int>(*s.cases));
  std::ostringstream quiet;
  const CampaignResult r = run_campaign(s, quiet, false);
  EXPECT_EQ(r.crash, 0u);
  ASSERT_EQ(r.unsupported.count("test-declaring-refusing"), 1u);
  EXPECT_EQ(r.unsupported.at("test-declaring-refusing"), static_cast<std::uint64_t>(long_keys));
  EXPECT_EQ(r.run + long_keys, *s.cases);
  EXPECT_EQ(records(s).size(), r.run);
  // Said where the report reads it (ended.json), not only returned.
  std::ifstream in(fs::path(s.out) / "ended.json");
  const json::Value ended = json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
  EXPECT_EQ(ended.at("unsupported").at("test-declaring-refusing").get<std::uint64_t>(), static_cast<std::uint64_t>(long_keys));
}

}  // namespace
}  // namespace flashproof::fuzz
