// The campaign engine: the case generator, shards, the durable log and resume, crash isolation,
// shrinking and replay of saved failures, progress output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "core/json.h"
#include "fuzz/campaign.h"
#include "fuzz/campaign_meta.h"
#include "fuzz/case_runner.h"
#include "fuzz/child_process.h"
#include "fuzz/progress.h"
#include "fuzz/results_log.h"
#include "fuzz/shard.h"
#include "harness/case_file.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"
#include "kernels/algo/mask.h"

namespace flashproof::fuzz {
namespace {
namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / ("fuzz_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

std::vector<json::Value> records(const fs::path& dir) {
  std::vector<json::Value> out;
  std::ifstream in(dir / "cases.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

// A member's text: a string's own, anything else as written; "" when absent.
std::string text_of(const json::Value& j, const char* key) {
  const json::Value* v = json::find(j, key);
  return v == nullptr ? "" : v->is_string() ? v->get<std::string>() : json::write(*v);
}

// A member that must be there (the test fails at the first missing one).
const json::Value& at(const json::Value& j, const char* key) {
  const json::Value* v = json::find(j, key);
  if (v == nullptr) throw std::runtime_error(std::string("no member ") + key);
  return *v;
}

std::int64_t index_of(const json::Value& record) { return at(record, "index").get<std::int64_t>(); }

CampaignSpec small_spec(const fs::path& dir, std::vector<std::string> impls, std::uint64_t cases) {
  CampaignSpec s;
  s.generator.seed = 77;
  s.generator.max_seqlen = 40;
  s.generator.max_work = 1 << 14;
  s.impls = std::move(impls);
  s.cases = cases;
  s.out = dir.string();
  return s;
}

// ---- generator ----

TEST(CaseGenerator, IsAFunctionOfSeedAndIndex) {
  GeneratorSettings g;
  g.seed = 3;
  for (std::uint64_t i = 0; i < 50; ++i) {
    const FuzzCase a = generate_case(g, i), b = generate_case(g, i);
    EXPECT_EQ(case_to_json(a.c), case_to_json(b.c));
    EXPECT_EQ(a.kind, b.kind);
  }
  GeneratorSettings other = g;
  other.seed = 4;
  int same = 0;
  for (std::uint64_t i = 0; i < 50; ++i) same += case_to_json(generate_case(g, i).c) == case_to_json(generate_case(other, i).c);
  EXPECT_EQ(same, 0);
}

// The default profile's cases, pinned: a hash of the first 300 cases' files and kinds under three
// settings, taken before the production profile existed. Saved case files, resumed campaigns and
// campaign.json comparisons all rely on these draws never moving.
TEST(CaseGenerator, TheDefaultProfileIsPinned) {
  // The pins were taken over version 1 case files; the case is written back in that spelling
  // ("dist", no "softmax_scale"), so the same draws still give the same hashes.
  const auto version1 = [](std::string text) {
    const auto cut = [&](const std::string& from, const std::string& to) {
      const auto at = text.find(from);
      if (at == std::string::npos) throw std::logic_error("no " + from);
      const auto end = to == "\n" ? text.find('\n', at) + 1 : at + from.size();
      text.replace(at, end - at, to == "\n" ? "" : to);
    };
    cut("\"version\": 2", "\"version\": 1");
    cut("  \"softmax_scale\"", "\n");
    cut("\"distribution\"", "\"dist\"");
    return text;
  };
  const auto hash = [&](const GeneratorSettings& g) {
    std::uint64_t h = 1469598103934665603u;  // FNV-1a
    for (std::uint64_t i = 0; i < 300; ++i) {
      const FuzzCase f = generate_case(g, i);
      for (char ch : version1(case_to_json(f.c)) + f.kind) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211u;
    }
    return h;
  };
  GeneratorSettings plain;
  plain.seed = 11;
  GeneratorSettings small = plain;
  small.seed = 0;
  small.dtypes = {DType::fp32};
  small.direction = GeneratorSettings::Direction::forward;
  small.max_seqlen = 64;
  small.max_work = 4096;
  GeneratorSettings large = plain;
  large.seed = 123456789;
  large.direction = GeneratorSettings::Direction::backward;
  large.max_seqlen = 2048;
  large.max_work = std::int64_t{1} << 24;
  EXPECT_EQ(hash(plain), 16958123574874846414u);
  EXPECT_EQ(hash(small), 1966596988871234865u);
  EXPECT_EQ(hash(large), 10829055284904420546u);
}

TEST(CaseGenerator, CoversEveryKindShapeAndTheDomainEdge) {
  GeneratorSettings g;
  g.seed = 11;
  std::map<std::string, int> kinds;
  std::set<std::int64_t> head_dims;
  int gqa = 0, sq_lt_sk = 0, sq_gt_sk = 0, causal = 0, local = 0, none = 0, backward = 0, beyond_domain = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const FuzzCase f = generate_case(g, static_cast<std::uint64_t>(i));
    const Problem& p = f.c.problem;
    ASSERT_EQ(p.validate(), "") << i;
    ASSERT_LE(p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * p.head_dim, g.max_work) << i;
    ++kinds[f.kind];
    head_dims.insert(p.head_dim);
    gqa += p.heads_q > p.heads_kv;
    sq_lt_sk += p.seqlen_q < p.seqlen_k;
    sq_gt_sk += p.seqlen_q > p.seqlen_k;
    causal += p.causal();
    local += p.has_mask() && !p.causal();
    none += !p.has_mask();
    backward += f.c.backward;
    beyond_domain += f.c.dist.kind == Distribution::Kind::large_logits && f.c.dist.param > 1.8e19;
    if (f.kind == "masked-rows") {  // some row sees no key
      const algo::WindowMask<std::int64_t> m{p.mask_offset(), p.window_left, p.window_right};
      bool empty_row = false;
      for (std::int64_t r = 0; r < p.seqlen_q && !empty_row; ++r) {
        bool sees = false;
        for (std::int64_t j = 0; j < p.seqlen_k && !sees; ++j) sees = m.visible(r, j);
        empty_row = !sees;
      }
      EXPECT_TRUE(empty_row) << p.describe();
    }
  }
  // Weights of case_generator.cpp: 6, 6, 2, 2, 1, 2, 2, 1 of 22; each kind within 4 sigma.
  const std::map<std::string, double> weight = {{"normal", 6},       {"extreme-logits", 6},    {"near-dtype-max", 2},
                                                {"dominant-key", 2}, {"equal-rows", 1},        {"max-in-last-block", 2},
                                                {"masked-rows", 2},  {"subnormal", 1}};
  ASSERT_EQ(kinds.size(), weight.size());
  for (const auto& [kind, w] : weight) {
    const double expected = n * w / 22, sigma = std::sqrt(expected * (1 - w / 22));
    EXPECT_NEAR(kinds[kind], expected, 4 * sigma) << kind;
  }
  EXPECT_GT(head_dims.size(), 200u);  // nearly every head dim 1..256
  EXPECT_TRUE(head_dims.count(1) && head_dims.count(256));
  for (int count : {gqa, sq_lt_sk, sq_gt_sk, causal, local, none, backward, beyond_domain}) EXPECT_GT(count, n / 50);
}

// Half of the near-dtype-max cases scale the softmax by 1 / (sqrt(d) s^2) for inputs scaled by s,
// so the logits stay moderate while dO . v passes fp16's maximum: the regime where the backward's
// dP (naive) and dS (the flash kernels) overflow inside the domain. No other kind sets a scale.
TEST(CaseGenerator, NearDtypeMaxKeepsTheLogitsModerateInHalfItsCases) {
  GeneratorSettings g;
  g.seed = 11;
  int near_max = 0, moderate = 0, dp_beyond_fp16 = 0;
  double largest_logit = 0;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    const FuzzCase f = generate_case(g, i);
    const Problem& p = f.c.problem;
    if (f.kind != "near-dtype-max") {
      EXPECT_FALSE(p.scale.has_value()) << f.kind;
      continue;
    }
    ++near_max;
    if (!p.scale) continue;
    ++moderate;
    const double s = effective_param(f.c.dist);
    EXPECT_NEAR(*p.scale * std::sqrt(static_cast<double>(p.head_dim)) * s * s, 1, 1e-6);
    if (p.dtype != DType::fp16 || moderate > 40) continue;
    // The logits and dO . v of the first key of each row, for the first fp16 cases.
    const Inputs in = generate_inputs(p, f.c.dist, f.c.seed);
    for (std::int64_t r = 0; r < p.seqlen_q; ++r) {
      double logit = 0, dp = 0;
      for (std::int64_t c = 0; c < p.head_dim; ++c) {
        logit += in.q.get(0, r, 0, c) * in.k.get(0, 0, 0, c);
        dp += in.dout.get(0, r, 0, c) * in.v.get(0, 0, 0, c);
      }
      largest_logit = std::max(largest_logit, std::fabs(logit * *p.scale));
      dp_beyond_fp16 += std::fabs(dp) > 65504;
    }
  }
  ASSERT_GT(near_max, 200);
  EXPECT_NEAR(moderate, near_max / 2.0, 4 * std::sqrt(near_max / 4.0));
  EXPECT_LT(largest_logit, 16);
  EXPECT_GT(dp_beyond_fp16, 0);
}

// ---- the production profile ----

std::int64_t q_elements(const Problem& p) { return p.batch * p.seqlen_q * p.heads_q * p.head_dim; }
std::int64_t kv_elements(const Problem& p) { return p.batch * p.seqlen_k * p.heads_kv * p.head_dim; }

// Every kind at its weight, every case valid and within the element cap, each kind with its
// shape (docs/fuzz.md, "Production profile"), backwards only where the all-rows pass fits.
TEST(ProductionProfile, GivesEveryKindWithItsShapeWithinTheCap) {
  GeneratorSettings g;
  g.seed = 5;
  g.profile = Profile::production;
  std::map<std::string, int> kinds, backward, normal;
  std::set<std::int64_t> head_dims, index_limits, windows;
  std::set<std::string> dtypes;
  int causal = 0, none = 0, growing = 0, pow2_long = 0;
  const int n = 3000;
  for (int i = 0; i < n; ++i) {
    const FuzzCase f = generate_case(g, static_cast<std::uint64_t>(i));
    const Problem& p = f.c.problem;
    const std::string what = f.kind + " " + p.describe();
    ASSERT_EQ(p.validate(), "") << what;
    ASSERT_LE(q_elements(p), kProductionMaxElements) << what;
    ASSERT_LE(kv_elements(p), kProductionMaxElements) << what;
    ASSERT_FALSE(p.scale.has_value()) << what;
    ++kinds[f.kind];
    dtypes.insert(std::string(dtype_name(p.dtype)));
    backward[f.kind] += f.c.backward;
    normal[f.kind] += f.c.dist.kind == Distribution::Kind::normal;
    if (f.c.backward) {  // the all-rows pass of the backward fits
      EXPECT_LE(p.seqlen_q * p.seqlen_k, kProductionMaxBackwardPairs) << what;
      EXPECT_LE(p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * p.head_dim, kProductionMaxBackwardWork) << what;
    }
    if (p.causal()) ++causal;
    else if (!p.has_mask()) ++none;
    else {
      EXPECT_EQ(p.window_right, 0) << what;
      windows.insert(p.window_left);
    }
    if (f.kind == "many-heads") {  // (batch, head) pairs past one grid dimension's 65535
      EXPECT_GT(p.batch * p.heads_q, 65535) << what;
      EXPECT_LE(p.batch * p.heads_q, 131072) << what;
      EXPECT_LE(p.heads_q, 65535) << what;
      EXPECT_LE(p.batch, 65535) << what;
      EXPECT_TRUE(p.seqlen_q >= 1 && p.seqlen_q <= 32 && p.seqlen_k >= 1 && p.seqlen_k <= 32) << what;
      EXPECT_TRUE(p.head_dim == 32 || p.head_dim == 64) << what;
      continue;
    }
    head_dims.insert(p.head_dim);
    if (f.kind == "long-context") {
      EXPECT_EQ(p.seqlen_q, p.seqlen_k) << what;
      EXPECT_TRUE(p.seqlen_k >= 16384 && p.seqlen_k <= 131072) << what;
      pow2_long += (p.seqlen_k & (p.seqlen_k - 1)) == 0;
    } else if (f.kind == "long-kv") {
      EXPECT_TRUE(p.seqlen_q >= 1 && p.seqlen_q <= 64) << what;
      EXPECT_TRUE(p.seqlen_k >= 16384 && p.seqlen_k <= 131072) << what;
    } else if (f.kind == "decode-cache") {  // long KV caches, paged in 3 of 4, forward only
      EXPECT_TRUE(p.kv_cache() && p.seqlen_q >= 1 && p.seqlen_q <= 16) << what;
      EXPECT_TRUE(p.seqlen_k >= 16 && p.seqlen_k <= 131072) << what;
      EXPECT_FALSE(f.c.backward) << what;
    } else if (f.kind == "index-limit") {
      EXPECT_TRUE(p.seqlen_q >= 1 && p.seqlen_q <= 64) << what;
      const std::set<std::int64_t> limits = {32767, 32768, 32769, 65535, 65536, 65537};
      EXPECT_TRUE(limits.count(p.seqlen_k)) << what;
      index_limits.insert(p.seqlen_k);
    } else if (f.kind == "ragged-tail") {  // the last tile holds one row and one key
      for (std::int64_t len : {p.seqlen_q, p.seqlen_k}) {
        EXPECT_EQ(len % 128, 1) << what;
        EXPECT_TRUE(len >= 4096 && len <= 32768) << what;
      }
    } else if (f.kind == "accumulated-rounding") {
      EXPECT_TRUE(p.seqlen_k >= 16384 && p.seqlen_k <= 65536) << what;
      EXPECT_TRUE(p.seqlen_q == p.seqlen_k || p.seqlen_q <= 64) << what;
      EXPECT_FALSE(f.c.backward) << what;
      const bool growing_max = f.c.dist.kind == Distribution::Kind::growing_max;
      EXPECT_TRUE(growing_max || f.c.dist.kind == Distribution::Kind::normal) << what;
      growing += growing_max;
    } else {
      ADD_FAILURE() << "unknown kind " << what;
    }
  }
  // Weights of case_generator.cpp: 3, 3, 2, 2, 2, 2, 2 of 16; each kind within 4 sigma.
  const std::map<std::string, double> weight = {{"long-context", 3}, {"long-kv", 3},     {"index-limit", 2},
                                                {"many-heads", 2},   {"ragged-tail", 2}, {"accumulated-rounding", 2},
                                                {"decode-cache", 2}};
  ASSERT_EQ(kinds.size(), weight.size());
  ASSERT_EQ(case_kinds(Profile::production).size(), weight.size());
  for (const auto& [kind, w] : weight) {
    const double expected = n * w / 16, sigma = std::sqrt(expected * (1 - w / 16));
    EXPECT_NEAR(kinds[kind], expected, 4 * sigma) << kind;
    EXPECT_EQ(std::count(case_kinds(Profile::production).begin(), case_kinds(Profile::production).end(), kind), 1);
  }
  EXPECT_EQ(head_dims, (std::set<std::int64_t>{64, 80, 96, 128, 256}));
  EXPECT_EQ(index_limits.size(), 6u);
  EXPECT_EQ(windows, (std::set<std::int64_t>{1024, 4096}));
  EXPECT_EQ(dtypes, (std::set<std::string>{"fp16", "bf16"}));
  EXPECT_GT(causal, n / 5);
  EXPECT_GT(none, n / 5);
  EXPECT_GT(pow2_long, kinds["long-context"] / 5);
  EXPECT_GT(growing, kinds["accumulated-rounding"] / 4);
  // Backwards where the kind and the all-rows pass allow them: decode and index-limit cases mostly
  // can, long contexts almost never.
  for (const char* kind : {"long-kv", "index-limit", "ragged-tail", "many-heads"}) EXPECT_GT(backward[kind], kinds[kind] / 10) << kind;
  EXPECT_LT(backward["long-context"], kinds["long-context"] / 20);
  // Mostly normal values (accumulated-rounding: half growing-max).
  for (const auto& [kind, w] : weight) EXPECT_GT(normal[kind], kinds[kind] * (kind == "accumulated-rounding" ? 0.35 : 0.7)) << kind;
}

TEST(ProductionProfile, IsAFunctionOfSeedAndIndex) {
  GeneratorSettings g;
  g.seed = 3;
  g.profile = Profile::production;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const FuzzCase a = generate_case(g, i), b = generate_case(g, i);
    EXPECT_EQ(case_to_json(a.c), case_to_json(b.c));
    EXPECT_EQ(a.kind, b.kind);
  }
  GeneratorSettings other = g;
  other.seed = 4;
  GeneratorSettings standard = g;
  standard.profile = Profile::standard;
  int same = 0, same_as_default = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    same += case_to_json(generate_case(g, i).c) == case_to_json(generate_case(other, i).c);
    same_as_default += case_to_json(generate_case(g, i).c) == case_to_json(generate_case(standard, i).c);
  }
  EXPECT_EQ(same, 0);
  EXPECT_EQ(same_as_default, 0);
  // --backward no gives forwards only, --backward yes backwards wherever the case allows one.
  GeneratorSettings forward = g, backward = g;
  forward.direction = GeneratorSettings::Direction::forward;
  backward.direction = GeneratorSettings::Direction::backward;
  int backwards = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    EXPECT_FALSE(generate_case(forward, i).c.backward);
    backwards += generate_case(backward, i).c.backward;
  }
  EXPECT_GT(backwards, 200 / 3);
}

// The campaign's check options: a default campaign's are the defaults (its records and case files
// unchanged), a production campaign samples 64 rows and columns with a seed of the case's.
TEST(ProductionProfile, CampaignsSampleAndSayItOnlyWhenNotTheDefault) {
  CampaignSpec plain;
  plain.generator.seed = 42;
  plain.impls = {"naive", "fa2"};
  plain.cases = 1000;
  const Case c = campaign_case(plain, 3, "naive");
  EXPECT_EQ(case_to_json(c, campaign_check_options(plain, c)), case_to_json(c));
  // campaign.json's parameters of a default campaign, as they were before profiles existed.
  EXPECT_EQ(parameters_json(plain),
            "{\"seed\": \"42\", \"impls\": [\"naive\", \"fa2\"], \"dtypes\": [\"fp16\", \"bf16\"], \"cases\": 1000, "
            "\"minutes\": null, \"backward\": \"both\", \"max_seqlen\": 512, \"max_work\": 2097152, "
            "\"shard\": {\"index\": 0, \"count\": 1}}");
  CampaignSpec explicit_zero = plain;
  explicit_zero.sample = 0;
  EXPECT_EQ(parameters_json(explicit_zero), parameters_json(plain));

  CampaignSpec production = plain;
  production.generator.profile = Profile::production;
  const Case big = campaign_case(production, 3, "naive");
  const CheckOptions o = campaign_check_options(production, big);
  EXPECT_EQ(o.reference.sample, 64);
  EXPECT_EQ(o.reference.sample_seed, campaign_check_options(production, big).reference.sample_seed);
  EXPECT_NE(o.reference.sample_seed, campaign_check_options(production, campaign_case(production, 4, "naive")).reference.sample_seed);
  const std::string params = parameters_json(production);
  EXPECT_NE(params.find(", \"profile\": \"production\", \"sample\": 64}"), std::string::npos) << params;
  production.sample = 0;  // every element: the profile is named, the sample is the default's
  EXPECT_EQ(campaign_check_options(production, big).reference.sample, 0);
  EXPECT_NE(parameters_json(production).find("\"profile\": \"production\"}"), std::string::npos);
  production.sample = 8;
  EXPECT_NE(parameters_json(production).find("\"sample\": 8}"), std::string::npos);
  plain.sample = 8;  // a sampled default campaign names its sample, not its profile
  EXPECT_EQ(parameters_json(plain).find("profile"), std::string::npos);
  EXPECT_NE(parameters_json(plain).find(", \"sample\": 8}"), std::string::npos);
}

// A sampled campaign's records carry their check options, and the campaign resumes on them (the
// check that each record is one of this campaign's compares the case with those options).
TEST(Campaign, ASampledCampaignRecordsItsSampleAndResumes) {
  const fs::path dir = fresh_dir("sampled");
  CampaignSpec s = small_spec(dir, {"naive"}, 6);
  s.sample = 2;
  std::ostringstream quiet;
  const CampaignResult first = run_campaign(s, quiet, false);
  EXPECT_EQ(first.run, 6u);
  EXPECT_EQ(first.fail + first.crash, 0u);
  for (const json::Value& r : records(dir)) {
    const json::Value& check = at(at(r, "case"), "check");
    EXPECT_EQ(at(check, "sample").get<std::int64_t>(), 2);
    EXPECT_NE(text_of(check, "sample_seed"), "0");
  }
  std::ifstream meta(dir / "campaign.json");
  const std::string text((std::istreambuf_iterator<char>(meta)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"sample\": 2}"), std::string::npos) << text;
  const CampaignResult again = run_campaign(s, quiet, false);  // resumes: every record is this campaign's
  EXPECT_EQ(again.run, 0u);
  EXPECT_EQ(again.resumed, 6u);
  CampaignSpec other = s;
  other.sample = 3;
  EXPECT_THROW(run_campaign(other, quiet, false), std::invalid_argument);
}

// ---- shards ----

TEST(Shard, ParsesAndRejects) {
  EXPECT_EQ(parse_shard("3/16").index, 3u);
  EXPECT_EQ(parse_shard("3/16").count, 16u);
  for (const char* bad : {"16/16", "3", "a/4", "1/0", "-1/4", "1/4x"}) EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

TEST(Shard, FromSlurmAndKubernetes) {
  ::unsetenv("JOB_COMPLETION_INDEX");
  ::setenv("SLURM_ARRAY_TASK_ID", "5", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "8", 1);
  std::optional<Shard> s = shard_from_environment(std::nullopt);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "4/8");
  ::setenv("SLURM_ARRAY_TASK_ID", "9", 1);
  EXPECT_THROW(shard_from_environment(std::nullopt), std::invalid_argument);  // 8 of 8
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  EXPECT_FALSE(shard_from_environment(std::nullopt));
  ::setenv("JOB_COMPLETION_INDEX", "2", 1);
  EXPECT_THROW(shard_from_environment(std::nullopt), std::invalid_argument);  // count needed
  s = shard_from_environment(3);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "2/3");
  ::unsetenv("JOB_COMPLETION_INDEX");
}

// A stepped Slurm array (--array=10-20:2: tasks 10, 12, ..., 20, six of them) numbers the shards
// by the task's place in the sequence; reading ID - MIN as the shard ran shards 0, 2, 4 and failed
// the tasks past the count, so shards 1, 3, 5 never ran. An index list that is not evenly spaced
// has no such numbering and is refused in every task, or in at least one (a task off the step).
TEST(Shard, FromASteppedSlurmArray) {
  ::unsetenv("JOB_COMPLETION_INDEX");
  ::setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
  ::setenv("SLURM_ARRAY_TASK_MAX", "20", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "6", 1);
  std::set<std::string> shards;
  for (int id = 10; id <= 20; id += 2) {
    ::setenv("SLURM_ARRAY_TASK_ID", std::to_string(id).c_str(), 1);
    const std::optional<Shard> s = shard_from_environment(std::nullopt);
    ASSERT_TRUE(s) << id;
    shards.insert(s->text());
  }
  EXPECT_EQ(shards, (std::set<std::string>{"0/6", "1/6", "2/6", "3/6", "4/6", "5/6"}));
  ::setenv("SLURM_ARRAY_TASK_ID", "13", 1);  // not on the step
  EXPECT_THROW(shard_from_environment(std::nullopt), std::invalid_argument);
  // --array=1,2,4: min 1, max 4, three tasks: 3 / 2 is no whole step.
  ::setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
  ::setenv("SLURM_ARRAY_TASK_MAX", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "3", 1);
  ::setenv("SLURM_ARRAY_TASK_ID", "2", 1);
  EXPECT_THROW(shard_from_environment(std::nullopt), std::invalid_argument);
  // --array=0,1,2,6: the step would be 2, and task 1 is off it.
  ::setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
  ::setenv("SLURM_ARRAY_TASK_MAX", "6", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
  ::setenv("SLURM_ARRAY_TASK_ID", "1", 1);
  EXPECT_THROW(shard_from_environment(std::nullopt), std::invalid_argument);
  // A plain range with MAX set: 3 of --array=0-7 is shard 3/8.
  ::setenv("SLURM_ARRAY_TASK_MAX", "7", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "8", 1);
  ::setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  EXPECT_EQ(shard_from_environment(std::nullopt)->text(), "3/8");
  for (const char* v : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT"})
    ::unsetenv(v);
}

// The union of the shards' records is the unsharded campaign's, case for case.
TEST(Campaign, ShardsTogetherRunExactlyTheUnshardedCases) {
  const fs::path whole = fresh_dir("whole");
  std::ostringstream quiet;
  run_campaign(small_spec(whole, {"naive"}, 23), quiet, false);
  std::map<std::uint64_t, std::string> expected;
  for (const json::Value& r : records(whole))
    expected[static_cast<std::uint64_t>(index_of(r))] = text_of(at(r, "case"), "seed") + text_of(at(r, "record"), "verdict");
  ASSERT_EQ(expected.size(), 23u);
  std::map<std::uint64_t, std::string> merged;
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < 3; ++i) {
    const fs::path dir = fresh_dir("shard" + std::to_string(i));
    CampaignSpec s = small_spec(dir, {"naive"}, 23);
    s.shard = Shard{i, 3};
    run_campaign(s, quiet, false);
    for (const json::Value& r : records(dir)) {
      ++total;
      merged[static_cast<std::uint64_t>(index_of(r))] = text_of(at(r, "case"), "seed") + text_of(at(r, "record"), "verdict");
    }
  }
  EXPECT_EQ(total, 23u);  // no case twice
  EXPECT_EQ(merged, expected);
}

// ---- durability ----

TEST(ResultsLog, DropsAnIncompleteLastLineAndResumes) {
  const fs::path dir = fresh_dir("resume");
  std::ostringstream quiet;
  const CampaignSpec spec = small_spec(dir, {"naive"}, 12);
  run_campaign(spec, quiet, false);
  std::vector<std::string> lines;
  {
    std::ifstream in(dir / "cases.jsonl");
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_EQ(lines.size(), 12u);
  {  // as if killed while writing record 8: records 0-7 whole, half of the 9th
    std::ofstream out(dir / "cases.jsonl", std::ios::trunc);
    for (int i = 0; i < 8; ++i) out << lines[static_cast<std::size_t>(i)] << "\n";
    out << lines[8].substr(0, lines[8].size() / 2);
  }
  const CampaignResult r = run_campaign(spec, quiet, false);
  EXPECT_EQ(r.resumed, 8u);
  EXPECT_EQ(r.run, 4u);
  const std::vector<json::Value> again = records(dir);
  ASSERT_EQ(again.size(), 12u);
  std::set<long long> indices;
  for (const json::Value& j : again) indices.insert(index_of(j));
  EXPECT_EQ(indices.size(), 12u);
  const CampaignResult done = run_campaign(spec, quiet, false);  // nothing left
  EXPECT_EQ(done.run, 0u);
  EXPECT_EQ(records(dir).size(), 12u);
}

TEST(Campaign, RefusesADirectoryOfAnotherCampaign) {
  const fs::path dir = fresh_dir("other");
  std::ostringstream quiet;
  run_campaign(small_spec(dir, {"naive"}, 2), quiet, false);
  CampaignSpec other = small_spec(dir, {"naive"}, 2);
  other.generator.seed = 78;
  EXPECT_THROW(run_campaign(other, quiet, false), std::invalid_argument);
}

// A (case, implementation) pair the implementation does not run (fa2 has no fp32) gets no record;
// the run counts it per implementation, so that the CLI can say why a campaign has fewer records
// than cases x implementations.
TEST(Campaign, CountsThePairsAnImplementationDoesNotRun) {
  const fs::path dir = fresh_dir("unsupported");
  CampaignSpec s = small_spec(dir, {"naive", "fa2"}, 10);
  s.generator.dtypes = {DType::fp16, DType::fp32};
  std::ostringstream quiet;
  const CampaignResult r = run_campaign(s, quiet, false);
  std::uint64_t fa2_records = 0, fp32_cases = 0;
  for (const json::Value& rec : records(dir)) fa2_records += text_of(rec, "impl") == "fa2";
  for (std::uint64_t i = 0; i < 10; ++i) fp32_cases += campaign_case(s, i, "fa2").problem.dtype == DType::fp32;
  ASSERT_GT(fp32_cases, 0u);
  EXPECT_EQ(r.unsupported.count("naive"), 0u);
  ASSERT_EQ(r.unsupported.count("fa2"), 1u);
  EXPECT_GE(r.unsupported.at("fa2"), fp32_cases);
  EXPECT_EQ(r.unsupported.at("fa2") + fa2_records, 10u);
  EXPECT_EQ(r.run, 10u + fa2_records);
}

// ---- crash isolation ----

// Plug-ins that die the ways a kernel can: a segfault, a hang, an exception (what the emulator
// throws for a deadlock or a divergent barrier), each only for seqlen_q > 3 so shrinking has a
// boundary to find.
class Dying final : public AttentionImpl {
 public:
  enum class How { segfault, hang, throws, hang_always };
  explicit Dying(How how) : how_(how), base_(make_naive_attention()) {}
  std::string name() const override {
    return how_ == How::segfault ? "test-segfault" : how_ == How::hang ? "test-hang" : how_ == How::throws ? "test-throws" : "test-hang-always";
  }
  std::string description() const override { return "dies for seqlen_q > 3"; }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const Problem& p, bool b) const override { return base_->unsupported_reason(p, b); }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  void forward(const Problem& p, const ForwardArgs& a) override {
    if (p.seqlen_q > 3 || how_ == How::hang_always) die();
    base_->forward(p, a);
  }
  void backward(const Problem& p, const BackwardArgs& a) override { base_->backward(p, a); }

 private:
  void die() {
    if (how_ == How::segfault) std::raise(SIGSEGV);
    if (how_ == How::hang || how_ == How::hang_always) std::this_thread::sleep_for(std::chrono::hours(1));
    throw std::runtime_error("emulator: barrier divergence in block (0,0,0)");
  }
  How how_;
  std::unique_ptr<AttentionImpl> base_;
};

void register_test_implementations() {
  static bool done = false;
  if (done) return;
  done = true;
  register_implementation(std::make_unique<Dying>(Dying::How::segfault));
  register_implementation(std::make_unique<Dying>(Dying::How::hang));
  register_implementation(std::make_unique<Dying>(Dying::How::throws));
  register_implementation(std::make_unique<Dying>(Dying::How::hang_always));
  register_implementation(make_naive_attention(NaiveFlaw::mask_off_by_one));
  // Correct itself; its alternate tile set (registered as its tile variant) misses the rescale.
  register_implementation(make_naive_attention(NaiveFlaw::alternate_tiles_skip_rescale));
}

// ---- the packed profile ----

// Valid packed batches within the limits, with the lengths packed kernels break on: empty and
// one-row sequences on both sides, one long sequence among short ones, every kind.
TEST(CaseGenerator, ThePackedProfileDrawsPackedBatches) {
  GeneratorSettings g;
  g.seed = 5;
  g.profile = Profile::packed;
  g.max_seqlen = 200;
  g.max_work = std::int64_t{1} << 20;
  std::set<std::string> kinds;
  bool empty_q = false, empty_k = false, one_row = false, long_among_short = false;
  for (std::uint64_t i = 0; i < 400; ++i) {
    const FuzzCase f = generate_case(g, i);
    const Problem& p = f.c.problem;
    ASSERT_EQ(p.validate(), "") << i;
    ASSERT_TRUE(p.packed()) << i;
    kinds.insert(f.kind);
    std::int64_t pairs = 0, shortest = g.max_seqlen;
    for (std::int64_t b = 0; b < p.sequences(); ++b) {
      const std::int64_t sq = p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b], sk = p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b];
      ASSERT_LE(std::max(sq, sk), g.max_seqlen) << i;
      pairs += sq * sk;
      empty_q |= sq == 0, empty_k |= sk == 0, one_row |= sq == 1;
      shortest = std::min(shortest, sq);
    }
    long_among_short |= p.sequences() >= 4 && p.max_seqlen_q() >= g.max_seqlen / 2 && shortest <= 4;
    EXPECT_LE(pairs * p.heads_q * p.head_dim, g.max_work) << i;
  }
  EXPECT_EQ(kinds.size(), case_kinds(Profile::packed).size());
  EXPECT_TRUE(empty_q && empty_k && one_row && long_among_short);
}

// A packed campaign passes the naive baseline (packed-aware) and finds the flaw that lets rows see
// other sequences' keys.
TEST(Campaign, PackedProfileFindsRowsSeeingOtherSequences) {
  static const bool registered = [] {
    register_implementation(make_naive_attention(NaiveFlaw::packed_ignores_sequences));
    return true;
  }();
  (void)registered;
  for (const std::string impl : {"naive", "naive-flawed:packed-ignores-sequences"}) {
    const fs::path dir = fresh_dir("packed_" + std::to_string(impl.size()));
    std::ostringstream quiet;
    CampaignSpec s = small_spec(dir, {impl}, 24);
    s.generator.profile = Profile::packed;
    const CampaignResult r = run_campaign(s, quiet, false);
    EXPECT_EQ(r.crash, 0u) << impl;
    if (impl == "naive") {
      EXPECT_EQ(r.fail, 0u) << quiet.str();
      EXPECT_GT(r.pass, 12u);
    } else {
      EXPECT_GT(r.fail, 4u) << "the campaign did not find rows seeing other sequences";
    }
  }
}

// The score-mod profile (docs/fuzz.md): the baseline passes it, and a campaign finds each broken
// variant of the soft cap and ALiBi (the cap's 1 - tanh^2 dropped, the bias's sign flipped, its
// distance aligned top-left), which show only on cases with them.
TEST(Campaign, ScoreModProfileFindsBrokenCapsAndBiases) {
  static const bool registered = [] {
    for (NaiveFlaw f : {NaiveFlaw::softcap_missing_derivative, NaiveFlaw::alibi_wrong_sign, NaiveFlaw::alibi_top_left})
      register_implementation(make_naive_attention(f));
    return true;
  }();
  (void)registered;
  for (const std::string impl : {"naive", "naive-flawed:softcap-missing-derivative", "naive-flawed:alibi-wrong-sign",
                                 "naive-flawed:alibi-top-left"}) {
    const fs::path dir = fresh_dir("score_mod_" + std::to_string(impl.size()));
    std::ostringstream quiet;
    CampaignSpec s = small_spec(dir, {impl}, 24);
    s.generator.profile = Profile::score_mod;
    // bf16: the baseline's fp16 dP overflows on the default profile's near-dtype-max cases (NaN dQ),
    // a defect of the baseline of its own, not of these.
    s.generator.dtypes = {DType::bf16};
    const CampaignResult r = run_campaign(s, quiet, false);
    EXPECT_EQ(r.crash, 0u) << impl;
    if (impl == "naive") {
      EXPECT_EQ(r.fail, 0u) << quiet.str();
      EXPECT_GT(r.pass, 12u);
    } else {
      EXPECT_GT(r.fail, 2u) << impl << ": the campaign did not find it";
    }
  }
}

// ---- the decode profile ----

// Valid forward-only KV-cache cases with the lengths, pages and split counts decode kernels break on.
TEST(CaseGenerator, TheDecodeProfileDrawsKvCaches) {
  GeneratorSettings g;
  g.seed = 9;
  g.profile = Profile::decode;
  g.max_seqlen = 300;
  std::set<std::string> kinds;
  bool empty = false, one = false, page_edge = false, full = false, shared = false, spare = false, shuffled = false,
       contiguous = false, forced = false, heuristic = false, non_power_page = false, appended = false,
       all_appended = false;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    const FuzzCase f = generate_case(g, i);
    const Problem& p = f.c.problem;
    ASSERT_EQ(p.validate(), "") << i;
    ASSERT_TRUE(p.kv_cache()) << i;
    ASSERT_FALSE(f.c.backward) << i;
    ASSERT_LE(p.seqlen_k, g.max_seqlen) << i;
    kinds.insert(f.kind);
    for (std::int64_t b = 0; b < p.batch; ++b) {
      const std::int64_t n = p.used_keys(b);
      empty |= n == 0, one |= n == 1, full |= n == p.seqlen_k;
      page_edge |= p.paged() && n > 1 && (n % p.page_size <= 1 || n % p.page_size == p.page_size - 1);
    }
    contiguous |= !p.paged();
    if (p.paged()) {
      const std::int64_t entries = static_cast<std::int64_t>(p.block_table.size());
      shared |= p.num_pages < entries, spare |= p.num_pages > entries;
      shuffled |= !std::is_sorted(p.block_table.begin(), p.block_table.end());
      non_power_page |= (p.page_size & (p.page_size - 1)) != 0;
    }
    forced |= p.num_splits > 0, heuristic |= p.num_splits == 0;
    appended |= p.appends();
    for (std::int64_t b = 0; b < p.batch && p.appends(); ++b) all_appended |= p.stored_keys(b) == 0;
  }
  EXPECT_EQ(kinds.size(), case_kinds(Profile::decode).size());
  EXPECT_TRUE(empty && one && page_edge && full && shared && spare && shuffled && contiguous && forced && heuristic &&
              non_power_page && appended && all_appended);
}

// A decode campaign passes the naive baseline, which reads caches through their tables, and finds
// the flaws that read a cache to its capacity or never write the later sequences' rows.
TEST(Campaign, DecodeProfileFindsCacheFlaws) {
  static const bool registered = [] {
    for (NaiveFlaw f : {NaiveFlaw::cache_allocated_length, NaiveFlaw::later_sequences_unwritten})
      register_implementation(make_naive_attention(f));
    return true;
  }();
  (void)registered;
  for (const std::string impl : {"naive", "naive-flawed:cache-allocated-length", "naive-flawed:later-sequences-unwritten"}) {
    const fs::path dir = fresh_dir("decode_" + std::to_string(impl.size()));
    std::ostringstream quiet;
    CampaignSpec s = small_spec(dir, {impl}, 24);
    s.generator.profile = Profile::decode;
    const CampaignResult r = run_campaign(s, quiet, false);
    EXPECT_EQ(r.crash, 0u) << impl;
    if (impl == "naive") {
      EXPECT_EQ(r.fail, 0u) << quiet.str();
      EXPECT_GT(r.pass, 12u);
    } else {
      EXPECT_GT(r.fail, 4u) << impl << ": the campaign did not find it";
    }
  }
}

// A defect in an implementation's other compiled tile set alone: a quarter of its cases, drawn from
// each case's seed, run that tile set, so a campaign finds it (before, only tile-independence ran
// it). The record keeps the implementation's name; its case, and so its replay, names the variant.
TEST(Campaign, DrawsTheOtherTileSetAndFindsItsDefect) {
  register_test_implementations();
  const std::string base = "naive-flawed:alternate-tiles-skip-rescale", variant = "naive-flawed:missing-rescale";
  ASSERT_NE(tile_variant(*find_implementation(base)), nullptr);
  const fs::path dir = fresh_dir("tile_variant");
  std::ostringstream quiet;
  // Forward only: the naive baseline's own fp16 backward fails near the dtype's maximum (docs/findings.md).
  CampaignSpec s = small_spec(dir, {base}, 24);
  s.generator.direction = GeneratorSettings::Direction::forward;
  const CampaignResult r = run_campaign(s, quiet, false);
  int drawn = 0, failed_in_variant = 0;
  for (const json::Value& j : records(dir)) {
    EXPECT_EQ(text_of(j, "impl"), base);
    const std::string ran = text_of(at(j, "case"), "impl");
    EXPECT_TRUE(ran == base || ran == variant) << ran;
    drawn += ran == variant;
    if (text_of(j, "status") == "fail") {
      EXPECT_EQ(ran, variant) << "the shipped tile set is correct";
      ++failed_in_variant;
    }
  }
  EXPECT_GT(drawn, 0);
  EXPECT_LT(drawn, 24);
  EXPECT_GT(failed_in_variant, 0) << "the campaign did not find the alternate tile set's defect";
  EXPECT_EQ(r.fail, static_cast<std::uint64_t>(failed_in_variant));
}

// What the deliberate segfault's record says: under AddressSanitizer (scripts/sanitized.sh) its
// SEGV handler reports and ends the child (signal 6 or exit status 1, as ASAN_OPTIONS say), and the
// record carries the report's last line, "==PID==ABORTING".
#if defined(__SANITIZE_ADDRESS__)
#define FP_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP_TEST_UNDER_ASAN 1
#endif
#endif
#ifdef FP_TEST_UNDER_ASAN
constexpr const char* kSegfaultDeath = "==ABORTING";
#else
constexpr const char* kSegfaultDeath = "signal 11";
#endif

TEST(Campaign, CrashesAreRecordedShrunkAndTheCampaignGoesOn) {
  register_test_implementations();
  const fs::path dir = fresh_dir("crash");
  CampaignSpec s = small_spec(dir, {"test-segfault", "test-hang", "test-throws", "naive"}, 6);
  s.case_timeout = 1;
  s.generator.max_seqlen = 12;
  std::ostringstream quiet;
  const CampaignResult r = run_campaign(s, quiet, false);
  std::map<std::string, int> crashes;
  int naive = 0;
  for (const json::Value& j : records(dir)) {
    const std::string impl = text_of(j, "impl"), status = text_of(j, "status");
    const std::int64_t sq = at(at(j, "case"), "seqlen_q").get<std::int64_t>();
    if (impl == "naive") {
      EXPECT_EQ(text_of(j, "where"), "host");  // the check record's, carried to the top
      ++naive;
      continue;
    }
    EXPECT_EQ(status == "crash", sq > 3) << impl << " sq=" << sq;
    if (status != "crash") continue;
    ++crashes[impl];
    const std::string error = text_of(j, "error");
    // A hang is a timeout, not a presumed deadlock.
    const char* expected = impl == "test-segfault" ? kSegfaultDeath : impl == "test-hang" ? "timed out: exceeded --case-timeout of 1 s" : "barrier divergence";
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    if (impl == "test-hang") {
      EXPECT_EQ(error.find("deadlock"), std::string::npos) << error;
    }
    EXPECT_TRUE(at(j, "record").is_null());
    // Shrunk to the boundary: the saved case has seqlen_q = 4 and one of everything else.
    const CaseFile saved = read_case_file((dir / text_of(j, "failure_file")).string());
    EXPECT_EQ(saved.c.problem.seqlen_q, 4) << impl;
    EXPECT_EQ(saved.c.problem.batch, 1);
    EXPECT_EQ(saved.c.problem.heads_q, 1);
    EXPECT_EQ(saved.c.problem.head_dim, 1);
    EXPECT_NE(text_of(j, "replay").find("flashproof replay "), std::string::npos);
  }
  EXPECT_EQ(naive, 6);  // the campaign went on after every crash
  for (const char* impl : {"test-segfault", "test-hang", "test-throws"}) EXPECT_GT(crashes[impl], 0) << impl;
  EXPECT_EQ(r.crash, static_cast<std::uint64_t>(crashes["test-segfault"] + crashes["test-hang"] + crashes["test-throws"]));
}

// With several implementations, those of a case share its reference and baseline through a file
// (fuzz/case_runner.h); the records are exactly those of one campaign per implementation, which
// prepares every case afresh.
TEST(Campaign, SharingACaseAmongImplementationsChangesNoRecord) {
  register_test_implementations();
  const std::vector<std::string> impls = {"naive", "naive-flawed:mask-off-by-one"};
  const auto essence = [](const json::Value& j) {  // verdict and every metric, without timings and paths
    std::string s = text_of(j, "status") + "|" + text_of(j, "logit_scale");
    if (const json::Value* rec = json::find(j, "record"); rec && !rec->is_null())
      s += "|" + text_of(*rec, "tensors") + "|" + text_of(*rec, "domain_note");
    return s;
  };
  const fs::path shared = fresh_dir("shared");
  std::ostringstream quiet;
  run_campaign(small_spec(shared, impls, 10), quiet, false);
  std::map<std::pair<std::uint64_t, std::string>, std::string> together, apart;
  for (const json::Value& j : records(shared))
    together[{static_cast<std::uint64_t>(index_of(j)), text_of(j, "impl")}] = essence(j);
  for (const std::string& impl : impls) {
    const fs::path dir = fresh_dir("alone");
    run_campaign(small_spec(dir, {impl}, 10), quiet, false);
    for (const json::Value& j : records(dir))
      apart[{static_cast<std::uint64_t>(index_of(j)), impl}] = essence(j);
  }
  EXPECT_EQ(together.size(), 20u);
  EXPECT_EQ(together, apart);
  EXPECT_FALSE(fs::exists(shared / ".work"));  // the shared files went with the work folder
}

// A flawed implementation's failures are shrunk, saved, and replay to the same verdict.
TEST(Campaign, FailuresAreShrunkAndReplayExactly) {
  register_test_implementations();
  const fs::path dir = fresh_dir("fail");
  CampaignSpec s = small_spec(dir, {"naive-flawed:mask-off-by-one"}, 12);
  std::ostringstream quiet;
  const CampaignResult r = run_campaign(s, quiet, false);
  ASSERT_GT(r.fail, 0u);
  for (const json::Value& j : records(dir)) {
    if (text_of(j, "status") != "fail") continue;
    const CaseFile saved = read_case_file((dir / text_of(j, "failure_file")).string());
    const Problem& original = campaign_case(s, static_cast<std::uint64_t>(index_of(j)), "x").problem;
    EXPECT_LE(saved.c.problem.seqlen_q * saved.c.problem.seqlen_k * saved.c.problem.head_dim * saved.c.problem.heads_q * saved.c.problem.batch,
              original.seqlen_q * original.seqlen_k * original.head_dim * original.heads_q * original.batch);
    EXPECT_EQ(run_check(saved.c, saved.options).verdict, Verdict::fail) << saved.note;
  }
}

// ---- integrity under kills and foreign files ----

// The campaign run in a forked process (as `flashproof fuzz` would be), to be killed.
pid_t campaign_in_child(const CampaignSpec& s) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::ostringstream quiet;
    try {
      run_campaign(s, quiet, false);
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  return pid;
}

// The live (not zombie) processes whose parent is `parent`, from /proc.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "pid (comm) state ppid ...": comm may hold spaces, so read after its last ')'.
    std::istringstream rest(line.substr(line.rfind(')') + 1));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  return line.substr(line.rfind(')') + 2, 1) != "Z";
}

// SIGKILL of the campaign takes its case process with it (the case would otherwise run on, up
// to its hour, beside the resumed run's copy of it).
TEST(Campaign, ItsChildrenDieWhenItIsKilled) {
  register_test_implementations();
  const fs::path dir = fresh_dir("killed");
  CampaignSpec s = small_spec(dir, {"test-hang-always"}, 3);
  s.shrink = false;
  const pid_t campaign = campaign_in_child(s);
  std::vector<pid_t> children;
  for (int i = 0; i < 200 && children.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    children = children_of(campaign);
  }
  ASSERT_EQ(children.size(), 1u) << "no case process appeared";
  ::kill(campaign, SIGKILL);
  ::waitpid(campaign, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 40 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gone = !alive(children[0]);
  }
  if (!gone) ::kill(children[0], SIGKILL);  // not to leave it behind when the test fails
  EXPECT_TRUE(gone) << "case process " << children[0] << " outlived its campaign by 2 s";
}

// A case count near 2^63 starts at once (the run once generated every case to count them first).
TEST(Campaign, AHugeCaseCountStartsAtOnce) {
  const fs::path dir = fresh_dir("huge");
  const pid_t campaign = campaign_in_child(small_spec(dir, {"naive"}, std::numeric_limits<std::int64_t>::max()));
  bool started = false;
  for (int i = 0; i < 200 && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    started = fs::exists(dir / "cases.jsonl") && fs::file_size(dir / "cases.jsonl") > 0;
  }
  ::kill(campaign, SIGKILL);
  ::waitpid(campaign, nullptr, 0);
  EXPECT_TRUE(started) << "no record within 10 s";
}

TEST(Campaign, RefusesARepeatedImplementation) {
  std::ostringstream quiet;
  const fs::path dir = fresh_dir("twice");
  try {
    run_campaign(small_spec(dir, {"naive", "naive"}, 2), quiet, false);
    FAIL() << "a repeated implementation ran";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'naive' is given twice"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "cases.jsonl"));
}

// A cases.jsonl brought from another campaign is refused, whether it names another campaign id or
// (records of a version without ids) holds other cases; the directory is left as it was.
TEST(Campaign, RefusesRecordsOfAnotherCampaign) {
  register_test_implementations();
  std::ostringstream quiet;
  const fs::path theirs = fresh_dir("theirs");
  run_campaign(small_spec(theirs, {"naive"}, 4), quiet, false);
  const auto refused = [&](const CampaignSpec& s, const char* why) {
    try {
      run_campaign(s, quiet, false);
      ADD_FAILURE() << "resumed over another campaign's records";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  // Same parameters, another directory: only the id tells them apart.
  const fs::path same_params = fresh_dir("same_params");
  fs::create_directories(same_params);
  fs::copy_file(theirs / "cases.jsonl", same_params / "cases.jsonl");
  refused(small_spec(same_params, {"naive"}, 4), "not of this directory's campaign");
  EXPECT_FALSE(fs::exists(same_params / "campaign.json"));
  // Records without an id (an older version) of another seed.
  const fs::path other_seed = fresh_dir("other_seed");
  fs::create_directories(other_seed);
  {
    std::ifstream in(theirs / "cases.jsonl");
    std::ofstream out(other_seed / "cases.jsonl");
    for (std::string line; std::getline(in, line);) {
      json::Value r = json::parse(line);
      r.erase("campaign_id");
      out << json::write(r) << "\n";
    }
  }
  CampaignSpec other = small_spec(other_seed, {"naive"}, 4);
  other.generator.seed = 78;
  refused(other, "differs from this campaign's case");
  CampaignSpec fewer = small_spec(other_seed, {"naive"}, 4);
  fewer.shard = Shard{1, 2};
  refused(fewer, "not a case of this campaign's shard 1/2");
  refused(small_spec(other_seed, {"naive-flawed:mask-off-by-one"}, 4), "which this campaign does not run");
  // An id that is not a string, in campaign.json and in the records alike: a number's text must not
  // pose as the id.
  const fs::path numeric = fresh_dir("numeric_id");
  fs::create_directories(numeric);
  const auto with_numeric_id = [](json::Value j) {
    if (j.contains("campaign_id")) j["campaign_id"] = 12345;
    return j;
  };
  {
    std::ifstream in(theirs / "cases.jsonl");
    std::ofstream out(numeric / "cases.jsonl");
    for (std::string line; std::getline(in, line);) out << json::write(with_numeric_id(json::parse(line))) << "\n";
    std::ifstream meta(theirs / "campaign.json");
    std::stringstream text;
    text << meta.rdbuf();
    std::ofstream(numeric / "campaign.json") << json::write(with_numeric_id(json::parse(text.str())), json::indented()) << "\n";
  }
  refused(small_spec(numeric, {"naive"}, 4), "campaign_id is not a string");
}

// A directory of a version without campaign ids resumes: its records are checked by their cases,
// and campaign.json gains an id that the new records carry.
TEST(Campaign, ADirectoryWithoutIdsResumes) {
  std::ostringstream quiet;
  const fs::path dir = fresh_dir("no_ids");
  run_campaign(small_spec(dir, {"naive"}, 6), quiet, false);
  const auto strip = [](const fs::path& file, bool lines) {
    std::ifstream in(file);
    std::string text, line;
    while (std::getline(in, line)) text += line + "\n";
    in.close();
    std::ofstream out(file, std::ios::trunc);
    const auto without_id = [](const std::string& t, bool one) {
      json::Value j = json::parse(t);
      j.erase("campaign_id");
      return json::write(j, one ? json::one_line() : json::indented()) + "\n";
    };
    if (!lines) {
      out << without_id(text, false);
      return;
    }
    std::istringstream all(text);
    for (int n = 0; std::getline(all, line) && n < 3; ++n) out << without_id(line, true);  // 3 of 6 kept
  };
  strip(dir / "campaign.json", false);
  strip(dir / "cases.jsonl", true);
  // The old campaign.json is replaced whole by the one with the id, not rewritten in place: a link
  // to the old file keeps its bytes.
  fs::create_hard_link(dir / "campaign.json", dir / "campaign-before");
  const CampaignResult r = run_campaign(small_spec(dir, {"naive"}, 6), quiet, false);
  {
    std::ifstream before(dir / "campaign-before");
    std::stringstream old_text;
    old_text << before.rdbuf();
    EXPECT_EQ(json::find(json::parse(old_text.str()), "campaign_id"), nullptr);
  }
  EXPECT_EQ(r.resumed, 3u);
  EXPECT_EQ(r.run, 3u);
  std::ifstream in(dir / "campaign.json");
  std::stringstream text;
  text << in.rdbuf();
  const json::Value campaign = json::parse(text.str());
  const json::Value* id = json::find(campaign, "campaign_id");
  ASSERT_NE(id, nullptr);
  ASSERT_TRUE(id->is_string());
  const std::vector<json::Value> all = records(dir);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(at(all[5], "campaign_id"), *id);
}

// campaign.json and ended.json are written whole: a new file renamed over the old, never the old
// one rewritten in place (a kill midway would leave half a file, and an unresumable directory).
TEST(ResultsLog, FilesAreReplacedNotRewritten) {
  const fs::path dir = fresh_dir("atomic");
  fs::create_directories(dir);
  const fs::path file = dir / "f.json", link = dir / "hard-link";
  { std::ofstream(file) << "old"; }
  fs::create_hard_link(file, link);  // shares the old file's inode
  write_file_atomically(file.string(), "new");
  std::ifstream a(file), b(link);
  std::string now, before;
  a >> now;
  b >> before;
  EXPECT_EQ(now, "new");
  EXPECT_EQ(before, "old");
  EXPECT_FALSE(fs::exists(dir / "f.json.tmp"));
}

TEST(ShellQuoted, PastesBackAsOneWordOnOneLine) {
  EXPECT_EQ(shell_quoted("out/failures/naive-3.json"), "out/failures/naive-3.json");
  EXPECT_EQ(shell_quoted("my out/x.json"), "'my out/x.json'");
  EXPECT_EQ(shell_quoted("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quoted("$(rm -rf ~)"), "'$(rm -rf ~)'");
  EXPECT_EQ(shell_quoted("a\nb\x1b'"), "$'a\\x0ab\\x1b\\''");
  EXPECT_EQ(shell_quoted(""), "''");
}

// ---- progress ----

TEST(Progress, BarOnATerminalLinesOtherwise) {
  std::ostringstream term, log;
  Progress bar(term, true, 10, std::nullopt), lines(log, false, 10, std::nullopt, 0);
  lines.update(3, 1, 0);
  bar.finish(10, 1, 0);
  lines.finish(10, 1, 0);
  EXPECT_NE(term.str().find("\r[##############################] 10/10"), std::string::npos) << term.str();
  EXPECT_NE(term.str().find("cases/min"), std::string::npos);
  EXPECT_NE(log.str().find("fuzz: [#########.....................] 3/10"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("ETA "), std::string::npos);
  EXPECT_EQ(log.str().find('\r'), std::string::npos);
}

}  // namespace
}  // namespace flashproof::fuzz

// ---- the child's answer ----

namespace flashproof::fuzz {
namespace {

// The child answers with one JSON object, read once; anything else is a crash, never a verdict.
TEST(ChildAnswer, IsReadOnceAndAnUnreadableOneIsACrash) {
  ChildEnd end;
  end.normal = true;
  end.seconds = 2;
  end.result = R"({"status": "fail", "why": "O: above bound", "logit_scale": "inf", "seconds": {"impl": 0.5, "reference": 0.25, "bounds": 0.125}, "record": {"case": {"where": "host"}, "verdict": "fail"}})";
  const CaseOutcome o = outcome_of(end);
  EXPECT_EQ(o.status, CaseStatus::fail);
  EXPECT_EQ(o.why, "O: above bound");
  EXPECT_EQ(o.where, "host");
  EXPECT_TRUE(std::isinf(o.logit_scale));
  EXPECT_EQ(o.seconds_total, 2);
  EXPECT_EQ(o.seconds_impl, 0.5);
  EXPECT_EQ(o.seconds_bounds, 0.125);
  EXPECT_EQ(json::write(o.record), R"({"case": {"where": "host"}, "verdict": "fail"})");
  for (const char* broken : {"", "pass\n\n0\n0 0 0\n{}", "[1]", R"({"status": "pass", "why": "", "logit_scale": 1, "seconds": {"impl": 0, "reference": 0, "bounds": 0}})",
                             R"({"status": "", "why": "", "logit_scale": 1, "seconds": {"impl": 0, "reference": 0, "bounds": 0}, "record": {}})",
                             R"({"status": "pass", "why": "", "logit_scale": 1, "seconds": 3, "record": {}})",
                             // A status that is no verdict's name (core/verdict.h) is no answer.
                             R"({"status": "passed", "why": "", "logit_scale": 1, "seconds": {"impl": 0, "reference": 0, "bounds": 0}, "record": {}})"}) {
    end.result = broken;
    const CaseOutcome bad = outcome_of(end);
    EXPECT_EQ(bad.status, CaseStatus::crash) << broken;
    EXPECT_EQ(bad.why, "the check's child process ended without a complete result") << broken;
    EXPECT_TRUE(bad.record.is_null()) << broken;
  }
  end.normal = false;
  end.problem = "killed by signal 11 (Segmentation fault)";
  EXPECT_EQ(outcome_of(end).status, CaseStatus::crash);
  EXPECT_EQ(outcome_of(end).why, end.problem);
}

}  // namespace
}  // namespace flashproof::fuzz
