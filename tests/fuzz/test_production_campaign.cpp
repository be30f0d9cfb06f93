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
    const Json r = parse_json(line);
    ++records;
    ++kinds[r.find("kind")->text];
    ++statuses[r.find("status")->text];
    const Json& c = *r.find("case");
    backward += c.find("backward")->boolean;
    EXPECT_EQ(c.find("check")->find("sample")->integer(), 64);
    const Json* record = r.find("record");
    ASSERT_TRUE(record != nullptr && record->type == Json::Type::object) << line.substr(0, 400);
    sampled += record->find("reference")->find("sampled_rows") != nullptr;
    const std::int64_t q = c.find("batch")->integer() * c.find("seqlen_q")->integer() * c.find("heads_q")->integer() *
                           c.find("head_dim")->integer();
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
