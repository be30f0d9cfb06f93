// Case files (harness/case_file.h): exact round trips of every saved field, byte-identical
// re-serialisation, and a one-line error naming the problem for each kind of malformed file.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>
#include <unistd.h>

#include "harness/case_file.h"

namespace flashproof {
namespace {

using Kind = Distribution::Kind;

// Params each kind accepts, besides 0 (its default); empty for kinds that take none.
std::vector<double> params_of(Kind k) {
  if (effective_param(Distribution{k, 0}) == 0) return {};
  if (k == Kind::growing_max) return {1.0000000000000002, 1.5, 33.333333333333336, 1e300};
  if (k == Kind::special) return {5e-324, 0.1, 1.0 / 3, 1};
  return {5e-324, 0.1, 1.0 / 3, 5, 1e300};
}

std::vector<Distribution> every_distribution() {
  std::vector<Distribution> out;
  for (const std::string& name : distribution_names()) {
    const Distribution d = *parse_distribution(name);
    out.push_back(d);
    for (double p : params_of(d.kind)) out.push_back(Distribution{d.kind, p});
  }
  return out;
}

TEST(CaseFile, DistributionNameRoundTripsEveryKindAndParam) {
  const std::vector<Distribution> all = every_distribution();
  EXPECT_GE(all.size(), 28u);
  for (const Distribution& d : all) {
    const std::string name = distribution_name(d);
    const auto back = parse_distribution(name);
    ASSERT_TRUE(back) << name;
    EXPECT_EQ(back->kind, d.kind) << name;
    EXPECT_EQ(back->param, d.param) << name;  // exactly, not approximately
  }
}

void expect_same(const CaseFile& got, const Case& c, const CheckOptions& o, const std::string& note) {
  const Problem &p = got.c.problem, &q = c.problem;
  EXPECT_EQ(p.dtype, q.dtype);
  EXPECT_EQ(p.batch, q.batch);
  EXPECT_EQ(p.heads_q, q.heads_q);
  EXPECT_EQ(p.heads_kv, q.heads_kv);
  EXPECT_EQ(p.seqlen_q, q.seqlen_q);
  EXPECT_EQ(p.seqlen_k, q.seqlen_k);
  EXPECT_EQ(p.head_dim, q.head_dim);
  EXPECT_EQ(p.window_left, q.window_left);
  EXPECT_EQ(p.window_right, q.window_right);
  ASSERT_EQ(p.scale.has_value(), q.scale.has_value());
  if (q.scale) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(*p.scale), std::bit_cast<std::uint32_t>(*q.scale));
  }
  EXPECT_EQ(got.c.dist.kind, c.dist.kind);
  EXPECT_EQ(got.c.dist.param, c.dist.param);
  EXPECT_EQ(got.c.seed, c.seed);
  EXPECT_EQ(got.c.impl, c.impl);
  EXPECT_EQ(got.c.backward, c.backward);
  EXPECT_EQ(got.c.schedule, c.schedule);
  const CheckOptions& g = got.options;
  EXPECT_EQ(g.k_forward, o.k_forward);
  EXPECT_EQ(g.k_backward, o.k_backward);
  EXPECT_EQ(g.floor_ulps, o.floor_ulps);
  EXPECT_EQ(g.lse_floor_ulps, o.lse_floor_ulps);
  EXPECT_EQ(g.reference.backend, o.reference.backend);
  EXPECT_EQ(g.reference.precision_bits, o.reference.precision_bits);
  EXPECT_EQ(g.reference.rel_requirement, o.reference.rel_requirement);
  EXPECT_EQ(g.reference.abs_requirement, o.reference.abs_requirement);
  EXPECT_EQ(g.reference.relative_to, o.reference.relative_to);
  EXPECT_EQ(g.reference.sample, o.reference.sample);
  EXPECT_EQ(g.reference.sample_seed, o.reference.sample_seed);
  EXPECT_EQ(got.note, note);
}

// Every dtype, every distribution (with params), masks, explicit scales, seeds beyond 2^53,
// forward and backward, notes with escapes, non-default check options.
TEST(CaseFile, RoundTripIsExactAndByteIdentical) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> windows = {
      {-1, -1}, {-1, 0}, {3, 5}, {0, -1}, {0, 0}};
  const std::vector<std::optional<float>> scales = {
      std::nullopt, 0.125f, 0.1f, -1.5f, 1e-45f, FLT_MAX, -FLT_MAX, 0.0f, -0.0f, 0.3f};
  const std::vector<std::uint64_t> seeds = {0, 1, (std::uint64_t{1} << 53) + 1,
                                            std::numeric_limits<std::uint64_t>::max(),
                                            0x9E3779B97F4A7C15ull};
  const std::vector<std::string> notes = {
      "", "property fa2_forward failed; RC_PARAMS=\"reproduce=BchdcGl0dGVy\"",
      "back\\slash \"quoted\"\nsecond line\ttab\r\b\f \x01\x1f end", "caf\xc3\xa9 \xf0\x9f\x94\xa5"};
  const std::vector<Distribution> dists = every_distribution();
  int n = 0;
  for (DType t : {DType::fp16, DType::bf16, DType::fp32})
    for (std::size_t k = 0; k < dists.size(); ++k) {
      ++n;
      Case c;
      c.problem.dtype = t;
      c.problem.batch = 1 + n % 3;
      c.problem.heads_kv = 1 + n % 2;
      c.problem.heads_q = c.problem.heads_kv * (1 + n % 4);
      c.problem.seqlen_q = 1 + (n * 7) % 300;
      c.problem.seqlen_k = 1 + (n * 13) % 500;
      c.problem.head_dim = 1 + (n * 11) % 256;
      c.problem.window_left = windows[n % windows.size()].first;
      c.problem.window_right = windows[n % windows.size()].second;
      c.problem.scale = scales[n % scales.size()];
      c.dist = dists[k];
      c.seed = seeds[n % seeds.size()];
      c.impl = n % 3 == 0 ? "fa2-deterministic" : n % 3 == 1 ? "naive" : "my \"plug-in\"";
      c.backward = n % 2 == 0;
      c.schedule = n % 5 == 0 ? 0 : seeds[(n + 1) % seeds.size()];
      CheckOptions o;
      if (n % 2) {
        o.k_forward = 0.1;
        o.k_backward = 1.0 / 3;
        o.floor_ulps = 0;
        o.lse_floor_ulps = 7.25;
        o.reference.backend = n % 4 == 1 ? reference::Backend::mpfr : reference::Backend::cpp_bin_float;
        o.reference.precision_bits = 200 + n;
        o.reference.rel_requirement = 1e-300;
        o.reference.abs_requirement = 5e-324;
        o.reference.relative_to = reference::Options::RelativeTo::value;
        o.reference.sample = n;
        o.reference.sample_seed = std::numeric_limits<std::uint64_t>::max() - n;
      }
      const std::string note = notes[n % notes.size()];
      ASSERT_EQ(c.problem.validate(), "");
      const std::string text = case_to_json(c, o, note);
      SCOPED_TRACE(text);
      const CaseFile back = case_from_json(text, "x.json");
      expect_same(back, c, o, note);
      EXPECT_EQ(case_to_json(back.c, back.options, back.note), text);
    }
  EXPECT_EQ(n, static_cast<int>(3 * dists.size()));
}

TEST(CaseFile, WritesTheDocumentedFields) {
  Case c;
  c.seed = 18446744073709551615ull;
  c.problem.scale = 0.1f;
  CheckOptions o;
  o.k_forward = 0.1;
  const std::string text = case_to_json(c, o, "n");
  for (const char* field :
       {"\"format\": \"flashproof-case\"", "\"version\": 2", "\"seed\": \"18446744073709551615\"",
        "\"scale\": 0.10000000149011612", "\"softmax_scale\": 0.10000000149011612", "\"k_forward\": 0.10000000000000001",
        "\"distribution\": \"normal\"", "\"backward\": false", "\"note\": \"n\""})
    EXPECT_NE(text.find(field), std::string::npos) << field << " in " << text;
  EXPECT_NE(case_to_json(Case{}).find("\"scale\": null"), std::string::npos);
  EXPECT_NE(case_to_json(Case{}).find("\"softmax_scale\": 0.125"), std::string::npos);  // 1/sqrt(64)
  o.k_forward = std::numeric_limits<double>::infinity();
  EXPECT_THROW(case_to_json(c, o), std::invalid_argument);
}

// A hand-written file may leave out the note, the scale and the check options (defaults) and give
// the seed as a plain number.
TEST(CaseFile, OptionalFieldsAndPlainNumberSeeds) {
  const CaseFile f = case_from_json(
      R"({"format": "flashproof-case", "version": 2, "impl": "fa1", "dtype": "bf16", "batch": 2,
          "heads_q": 4, "heads_kv": 2, "seqlen_q": 9, "seqlen_k": 17, "head_dim": 40,
          "window_left": -1, "window_right": 0, "distribution": "scaled:3",
          "seed": 18446744073709551615, "backward": true, "check": {"sample": 3}})",
      "hand.json");
  EXPECT_EQ(f.c.seed, 18446744073709551615ull);
  EXPECT_FALSE(f.c.problem.scale);
  EXPECT_TRUE(f.c.problem.causal());
  EXPECT_EQ(f.c.dist.param, 3);
  EXPECT_EQ(f.note, "");
  EXPECT_EQ(f.options.k_forward, CheckOptions{}.k_forward);
  EXPECT_EQ(f.options.reference.sample, 3);
  EXPECT_EQ(f.options.reference.backend, reference::Backend::fast);
  // An implementation this build lacks is not a parse error (run_check reports it).
  EXPECT_EQ(f.c.impl, "fa1");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("test setup: no " + from);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    case_from_json(text, "x.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// A property's failure names the property; the field is written only then and reads back.
// The emulator schedule a failure happened under (kernels/emu/emulator.h): written as a decimal
// string when not the default, read back exactly; a file without it runs the default schedule.
TEST(CaseFile, ScheduleFieldRoundTripsAndIsOptional) {
  Case c;
  c.impl = "fa2";
  EXPECT_EQ(case_to_json(c).find("\"schedule\""), std::string::npos);
  c.schedule = std::numeric_limits<std::uint64_t>::max();
  const std::string text = case_to_json(c);
  EXPECT_NE(text.find("\"schedule\": \"18446744073709551615\""), std::string::npos) << text;
  EXPECT_EQ(case_from_json(text, "s.json").c.schedule, c.schedule);
  EXPECT_EQ(case_from_json(replaced(text, "\"18446744073709551615\"", "12"), "s.json").c.schedule, 12u);
  for (const char* bad : {"-1", "\"18446744073709551616\"", "1.5", "\"x\"", "null"})
    EXPECT_NE(error_of(replaced(text, "\"18446744073709551615\"", bad)).find("schedule"), std::string::npos) << bad;
}

TEST(CaseFile, PropertyFieldRoundTripsAndIsOptional) {
  Case c;
  c.impl = "naive-flawed:wrong-lse";
  const std::string text = case_to_json(c, {}, "why", "accuracy-regression");
  EXPECT_NE(text.find("\"property\": \"accuracy-regression\""), std::string::npos) << text;
  const CaseFile f = case_from_json(text, "p.json");
  EXPECT_EQ(f.property, "accuracy-regression");
  EXPECT_EQ(case_to_json(f.c, f.options, f.note, f.property), text);
  EXPECT_EQ(case_to_json(c).find("\"property\""), std::string::npos);
  EXPECT_EQ(case_from_json(case_to_json(c), "q.json").property, "");
  EXPECT_NE(error_of(replaced(text, "\"accuracy-regression\"", "7")).find("property"), std::string::npos);
}

// The soft cap and ALiBi slopes (docs/spec.md "Soft cap and ALiBi"): written only where set (a file
// without them reads as before), exactly round-tripped, one line per bad value.
TEST(CaseFile, ScoreModFieldsRoundTripAndAreOptional) {
  Case c;
  c.problem.heads_q = 2, c.problem.heads_kv = 1;
  EXPECT_EQ(case_to_json(c).find("softcap"), std::string::npos);
  EXPECT_EQ(case_to_json(c).find("alibi_slopes"), std::string::npos);
  c.problem.softcap = 30.5f;
  c.problem.alibi_slopes = {0.0625f, -0.75f};
  const std::string text = case_to_json(c);
  EXPECT_NE(text.find("\"softcap\": 30.5"), std::string::npos) << text;
  EXPECT_NE(text.find("\"alibi_slopes\": [0.0625, -0.75]"), std::string::npos) << text;
  const CaseFile f = case_from_json(text, "m.json");
  EXPECT_EQ(f.c.problem, c.problem);
  EXPECT_EQ(case_to_json(f.c), text);
  EXPECT_EQ(error_of(replaced(text, "\"softcap\": 30.5", "\"softcap\": -1")),
            "case file x.json: softcap (-1.000000) must be a finite number > 0 (omit it for no cap)");
  EXPECT_NE(error_of(replaced(text, "\"softcap\": 30.5", "\"softcap\": 1e39")).find("must be a finite fp32 number"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(text, "\"softcap\": 30.5", "\"softcap\": \"x\"")).find("softcap"), std::string::npos);
  EXPECT_NE(error_of(replaced(text, "[0.0625, -0.75]", "0.5")).find("must be an array of numbers"),
            std::string::npos);
  EXPECT_EQ(error_of(replaced(text, "[0.0625, -0.75]", "[0.5]")),
            "case file x.json: alibi_slopes must hold one slope per query head (2), not 1");
}

// A version 1 file (before the record layer; tests/harness/data/case_v1.json, docs/case-files.md's
// example of that time) reads as it was written, and writes back as version 2.
TEST(CaseFile, ReadsVersion1) {
  const CaseFile f = read_case_file(FLASHPROOF_TEST_DATA_DIR "/case_v1.json");
  EXPECT_EQ(f.c.impl, "fa2");
  EXPECT_EQ(f.c.problem.dtype, DType::bf16);
  EXPECT_EQ(f.c.problem.heads_q, 4);
  EXPECT_EQ(f.c.problem.seqlen_k, 17);
  EXPECT_EQ(f.c.problem.window_left, 3);
  EXPECT_EQ(f.c.problem.scale, 0.3f);
  EXPECT_EQ(distribution_name(f.c.dist), "large-logits:300");
  EXPECT_EQ(f.c.seed, 18446744073709551615ull);
  EXPECT_TRUE(f.c.backward);
  EXPECT_EQ(f.options.reference.sample, 5);
  const std::string again = case_to_json(f.c, f.options, f.note, f.property);
  EXPECT_NE(again.find("\"version\": 2"), std::string::npos);
  EXPECT_NE(again.find("\"distribution\": \"large-logits:300\""), std::string::npos);
  EXPECT_EQ(again.find("\"dist\""), std::string::npos);
  const CaseFile back = case_from_json(again, "again.json");
  EXPECT_EQ(case_to_json(back.c, back.options, back.note, back.property), again);
  // Version 1 knows no "softmax_scale".
  std::ifstream in(FLASHPROOF_TEST_DATA_DIR "/case_v1.json");
  std::string v1((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(error_of(replaced(v1, "\"backward\"", "\"softmax_scale\": 0.30000001192092896, \"backward\"")).find(
                "unknown field \"softmax_scale\""),
            std::string::npos);
}

TEST(CaseFile, EachMalformedFileGivesItsOneLineError) {
  Case c;
  c.problem.heads_q = 6;
  c.problem.heads_kv = 3;
  c.problem.seqlen_q = 7;
  const std::string good = case_to_json(c, {}, "note");
  ASSERT_EQ(error_of(good), "(no error)");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() / 2), "invalid JSON at line "},
      {good.substr(0, good.size() / 2), "unexpected end of file (truncated?)"},
      {"", "invalid JSON at line 1, column 1: unexpected end of file"},
      {good + "x", "unexpected characters after the top-level value"},
      {good + "{}", "unexpected characters after the top-level value"},
      {replaced(good, "\"seed\"", "\"seqlen_q\": 3, \"seed\""), "duplicate key \"seqlen_q\""},
      {replaced(good, "flashproof-case", "flashproof-report"),
       "not a flashproof case file (no \"format\": \"flashproof-case\")"},
      {replaced(good, "  \"format\": \"flashproof-case\",\n", ""), "not a flashproof case file"},
      {"[1, 2]", "not a flashproof case file (not a JSON object)"},
      {replaced(good, "\"version\": 2", "\"version\": 3"),
       "unsupported case file version 3 (this flashproof reads versions 1 and 2)"},
      {replaced(good, "\"version\": 2", "\"version\": \"2\""), "\"version\" must be an integer"},
      // Version 2 spells the distribution "distribution"; "dist" is version 1's.
      {replaced(good, "\"distribution\"", "\"dist\""), "missing field \"distribution\""},
      {replaced(good, "\"version\": 2", "\"version\": 1"), "missing field \"dist\""},
      // The derived scale must be the one the problem implies (head_dim 64: 0.125).
      {replaced(good, "\"softmax_scale\": 0.125", "\"softmax_scale\": 0.25"),
       "\"softmax_scale\" (0.25) is not the scale that \"scale\" and \"head_dim\" give (0.125)"},
      {replaced(good, "\"head_dim\": 64", "\"head_dim\": 16"), "is not the scale that"},
      {replaced(good, "\"softmax_scale\": 0.125", "\"softmax_scale\": null"), "\"softmax_scale\" must be a finite number"},
      {replaced(good, "  \"seqlen_q\": 7,\n", ""), "missing field \"seqlen_q\""},
      {replaced(good, "  \"backward\": false,\n", ""), "missing field \"backward\""},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": \"7\""), "\"seqlen_q\" must be an integer"},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": 7.5"), "\"seqlen_q\" must be an integer"},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": 1e2"), "\"seqlen_q\" must be an integer"},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": 99999999999999999999"),
       "\"seqlen_q\" must be an integer"},
      {replaced(good, "\"backward\": false", "\"backward\": 0"), "\"backward\" must be true or false"},
      {replaced(good, "\"dtype\": \"fp16\"", "\"dtype\": 16"), "\"dtype\" must be a string"},
      {replaced(good, "\"note\": \"note\"", "\"note\": null"), "\"note\" must be a string"},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": -3"), "seqlen_q (-3) must be >= 1"},
      {replaced(good, "\"batch\": 1", "\"batch\": 0"), "batch (0) must be >= 1"},
      {replaced(good, "\"heads_kv\": 3", "\"heads_kv\": 4"),
       "heads_q (6) must be a multiple of heads_kv (4)"},
      {replaced(good, "\"head_dim\": 64", "\"head_dim\": 300"), "head_dim (300) must be at most 256"},
      {replaced(good, "\"head_dim\": 64", "\"head_dim\": 0"), "head_dim (0) must be >= 1"},
      {replaced(good, "\"window_left\": -1", "\"window_left\": -2"), "window (-2,-1) sides must be"},
      {replaced(good, "\"dtype\": \"fp16\"", "\"dtype\": \"fp8\""),
       "unsupported dtype \"fp8\" (fp16, bf16, fp32)"},
      {replaced(good, "\"distribution\": \"normal\"", "\"distribution\": \"cauchy\""),
       "unknown distribution \"cauchy\" (normal, uniform"},
      {replaced(good, "\"distribution\": \"normal\"", "\"distribution\": \"scaled:0\""),
       "unknown distribution \"scaled:0\""},
      {replaced(good, "\"seed\": \"0\"", "\"seed\": \"-1\""),
       "\"seed\" must be an unsigned 64-bit integer (a decimal string, e.g. \"42\")"},
      {replaced(good, "\"seed\": \"0\"", "\"seed\": \"18446744073709551616\""),
       "\"seed\" must be an unsigned 64-bit integer"},
      {replaced(good, "\"seed\": \"0\"", "\"seed\": \" 7\""), "\"seed\" must be an unsigned"},
      {replaced(good, "\"seed\": \"0\"", "\"seed\": 1.5"), "\"seed\" must be an unsigned"},
      {replaced(good, "\"scale\": null", "\"scale\": 1e39"), "\"scale\" must be a finite fp32 number"},
      {replaced(good, "\"scale\": null", "\"scale\": 1e999"), "number beyond the range of a double"},  // refused by the reader
      {replaced(good, "\"scale\": null", "\"scale\": \"0.5\""), "\"scale\" must be a finite number"},
      {replaced(good, "\"seqlen_q\"", "\"seqlen-q\": 7, \"seqlen_q\""), "unknown field \"seqlen-q\""},
      {replaced(good, "\"check\": {", "\"check\": 3, \"x\": {"), "\"check\" must be a JSON object"},
      {replaced(good, "\"k_forward\": 2", "\"k_forward\": -1"), "\"check.k_forward\" must be >= 0"},
      {replaced(good, "\"k_forward\": 2", "\"k_forward\": true"),
       "\"check.k_forward\" must be a finite number"},
      {replaced(good, "\"reference\": \"fast\"", "\"reference\": \"gpu\""),
       "unknown reference backend \"gpu\" (fast, mpfr, cpp_bin_float)"},
      {replaced(good, "\"relative_to\": \"magnitude\"", "\"relative_to\": \"both\""),
       "\"check.relative_to\" must be \"magnitude\" or \"value\""},
      {replaced(good, "\"precision_bits\": 128", "\"precision_bits\": -5"),
       "\"check.precision_bits\" is out of range"},
      {replaced(good, "\"sample\": 0", "\"sample\": 0, \"samples\": 3"), "unknown field \"check.samples\""},
      {replaced(good, "\"sample\": 0", "\"sample\": -3"), "\"check.sample\" must be >= 0 (0: every row and column)"},
      {replaced(good, "\"note\"", "\"note\" 3, \"x\""), "expected ':'"},
      {replaced(good, "\"version\": 2,", "\"version\": 2"), "expected ',' or '}'"},
      {replaced(good, "\"note\": \"note\"", "\"note\": \"a\\qb\""), "unknown escape \\q"},
      {replaced(good, "\"note\": \"note\"", "\"note\": \"a\\\nb\""),
       "unknown escape: \\ before byte 0x0a"},
      {replaced(good, "\"note\": \"note\"", "\"note\": \"a\nb\""), "control character in a string"},
      {replaced(good, "\"note\": \"note\"", "\"note\": \"\\ud800\""), "high surrogate not followed"},
      {replaced(good, "\"note\": \"note\"", "\"note\": \"\\u12G4\""), "malformed \\u escape"},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": 07"), "expected ',' or '}'"},
      {replaced(good, "\"seqlen_q\": 7", "\"seqlen_q\": -"), "malformed number"},
      {replaced(good, "\"backward\": false", "\"backward\": fals"), "expected a value"},
      {"{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}", "nested deeper than 32 levels"},
  };
  for (const auto& [text, message] : cases) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find(message), std::string::npos) << "expected: " << message << "\ngot: " << e;
    EXPECT_EQ(e.rfind("case file x.json: ", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << "not one line: " << e;
  }
}

// Random byte edits of a good file (deletions, insertions, replacements, truncations): the reader
// either accepts the result or throws its one-line std::invalid_argument; nothing else escapes.
TEST(CaseFile, CorruptedFilesGiveOneLineErrorsOnly) {
  Case c;
  c.backward = true;
  c.problem.scale = 0.5f;
  const std::string good = case_to_json(c, {}, "a \"note\" with \\ escapes \u00e9");
  std::mt19937_64 rng(20240607);
  int errors = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::string text = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = rng() % text.size();
      constexpr char kBytes[] = "{}[]\":,0123456789-+.eE \n\\tfnu\x01\xff";
      const char byte = kBytes[rng() % (sizeof kBytes - 1)];
      switch (rng() % 4) {
        case 0: text.erase(at, 1); break;
        case 1: text.insert(at, 1, byte); break;
        case 2: text[at] = byte; break;
        default: text.resize(at); break;
      }
    }
    try {
      case_from_json(text, "x.json");
    } catch (const std::invalid_argument& e) {
      ++errors;
      const std::string m = e.what();
      ASSERT_EQ(m.rfind("case file x.json: ", 0), 0u) << m;
      ASSERT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  EXPECT_GT(errors, 3000);
}

TEST(CaseFile, FileRoundTripAndFileErrors) {
  const std::string dir = testing::TempDir() + "flashproof_case_files_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  Case c;
  c.impl = "fa2";
  c.backward = true;
  c.seed = (std::uint64_t{1} << 63) + 12345;
  c.dist = *parse_distribution("large-logits:300");
  const std::string path = dir + "/case.json";
  write_case_file(path, c, {}, "from a test");
  const CaseFile f = read_case_file(path);
  expect_same(f, c, {}, "from a test");
  std::ifstream in(path);
  const std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(on_disk, case_to_json(c, {}, "from a test"));

  auto read_error = [](const std::string& p) -> std::string {
    try {
      read_case_file(p);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(read_error(dir + "/missing.json"), "case file " + dir + "/missing.json: does not exist");
  EXPECT_EQ(read_error(dir), "case file " + dir + ": is a directory");
  EXPECT_EQ(read_error("/dev/null"), "case file /dev/null: is not a regular file");
  std::ofstream(dir + "/empty.json").close();
  EXPECT_NE(read_error(dir + "/empty.json").find("empty.json: invalid JSON at line 1, column 1"),
            std::string::npos);
  try {
    write_case_file(dir + "/no/such/dir/case.json", c);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write case file " + dir + "/no/such/dir/case.json: "),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace flashproof
