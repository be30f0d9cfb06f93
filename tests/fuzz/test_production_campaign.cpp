// A short production campaign end to end (label slow, a few minutes on two cores): `flashproof
// fuzz --profile production` over the naive implementation, every kind of the profile met, each
// check sampled, no failure and no crash.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "fuzz/case_generator.h"

namespace flashproof::fuzz {
namespace {
namespace fs = std::filesystem;

TEST(ProductionCampaign, EveryKindPassesSampledOverNaive) {
  const fs::path dir = fs::path(testing::TempDir()) / ("fuzz_production_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  // Seed 11's first 12 cases hold every kind, four of them backwards (index-limit at 65536 and
  // 32767, long-kv, many-heads); about 3 minutes on two cores.
  const std::string cmd = std::string(FLASHPROOF_BIN) + " fuzz --profile production --impl naive --seed 11 --cases 12 --out " +
                          dir.string() + " 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(cmd.c_str());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("production campaign: %.0f s\n", seconds);
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 0);

  std::map<std::string, int> kinds, statuses;
  int backward = 0, sampled = 0, records = 0;
  std::ifstream in(dir / "cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    const json::Value r = json::parse(line);
    const auto member = [&](const json::Value& j, const char* key) -> const json::Value& {
      static const json::Value none;
      const json::Value* v = json::find(j, key);
      EXPECT_NE(v, nullptr) << key << " in " << line.substr(0, 400);
      return v != nullptr ? *v : none;
    };
    const auto integer = [&](const json::Value& j, const char* key) {
      return json::integer(member(j, key)).value_or(-1);
    };
    ++records;
    ++kinds[json::string(member(r, "kind")).value_or("?")];
    ++statuses[json::string(member(r, "status")).value_or("?")];
    const json::Value& c = member(r, "case");
    backward += member(c, "backward") == true;
    EXPECT_EQ(integer(member(c, "check"), "sample"), 64);
    const json::Value& record = member(r, "record");
    ASSERT_TRUE(record.is_object()) << line.substr(0, 400);
    sampled += json::find(member(record, "reference"), "sampled_rows") != nullptr;
    const std::int64_t q = integer(c, "batch") * integer(c, "seqlen_q") * integer(c, "heads_q") * integer(c, "head_dim");
    EXPECT_LE(q, kProductionMaxElements);
  }
  EXPECT_EQ(records, 12);
  EXPECT_EQ(statuses["fail"], 0);
  EXPECT_EQ(statuses["crash"], 0);
  EXPECT_EQ(kinds.size(), case_kinds(Profile::production).size());
  EXPECT_GE(backward, 3);
  EXPECT_GE(sampled, 10);  // the sample covers a whole case only where it is short (many-heads)
  std::ifstream meta(dir / "campaign.json");
  const std::string text((std::istreambuf_iterator<char>(meta)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"profile\": \"production\", \"sample\": 64}"), std::string::npos) << text;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flashproof::fuzz
