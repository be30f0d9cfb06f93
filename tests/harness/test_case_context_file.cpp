// A prepared case saved and loaded (harness/case_context_file.h): the same check results as the
// freshly prepared case, and no trust in a file of another case, other options or damaged bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "harness/case_context_file.h"
#include "harness/check_render.h"
#include "tests/harness/bucket_not_built.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

namespace fs = std::filesystem;

Case gqa_causal_backward() {
  Case c;
  c.problem.dtype = DType::bf16;
  c.problem.batch = 2;
  c.problem.heads_q = 4;
  c.problem.heads_kv = 2;
  c.problem.seqlen_q = 9;
  c.problem.seqlen_k = 13;
  c.problem.head_dim = 24;
  c.problem.window_right = 0;
  c.seed = 11;
  c.backward = true;
  return c;
}

std::string path(const char* name) {
  return (fs::path(testing::TempDir()) / (std::string(name) + std::to_string(::getpid()) + ".ctx")).string();
}

// The record without its timings.
std::string record_of(const Case& c, const CaseContext& ctx) {
  CheckRecord r = run_check(c, *find_implementation(c.impl), ctx);
  r.seconds_impl = r.seconds_reference = r.seconds_bounds = 0;
  return to_json(r);
}

TEST(CaseContextFile, LoadedContextChecksLikeTheFreshOne) {
  const Case c = gqa_causal_backward();
  FP_SKIP_IF_BUCKET_NOT_BUILT("fa2", c.problem, true);
  const CaseContext fresh = prepare_case(c, {}, true);
  const std::string file = path("roundtrip");
  save_case_context(file, c, {}, fresh);
  const std::optional<CaseContext> loaded = load_case_context(file, c, {});
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->reference.forward.o.value, fresh.reference.forward.o.value);
  EXPECT_EQ(loaded->reference.backward->dk.bound, fresh.reference.backward->dk.bound);
  EXPECT_EQ(loaded->reference.backward->dq.checked, fresh.reference.backward->dq.checked);
  ASSERT_TRUE(loaded->baseline.has_value());
  for (const char* impl : {"naive", "fa2"}) {
    Case ci = c;
    ci.impl = impl;
    EXPECT_EQ(record_of(ci, *loaded), record_of(ci, fresh)) << impl;
  }
  fs::remove(file);
}

// A sampled check's context: the loaded one judges the same sample (it is recomputed from the key),
// so the implementation is told the same rows and columns and the records agree.
TEST(CaseContextFile, ALoadedSampledContextJudgesTheSameSample) {
  Case c = gqa_causal_backward();
  c.problem.batch = 1;
  c.problem.seqlen_q = 500;
  c.problem.seqlen_k = 450;
  FP_SKIP_IF_BUCKET_NOT_BUILT("fa2-deterministic", c.problem, true);
  CheckOptions opt;
  opt.reference.sample = 4;
  opt.reference.sample_seed = 9;
  const CaseContext fresh = prepare_case(c, opt, true);
  ASSERT_TRUE(fresh.sample.has_value());
  const std::string file = path("sampled");
  save_case_context(file, c, opt, fresh);
  const std::optional<CaseContext> loaded = load_case_context(file, c, opt);
  ASSERT_TRUE(loaded.has_value() && loaded->sample.has_value());
  EXPECT_EQ(loaded->sample->rows, fresh.sample->rows);
  EXPECT_EQ(loaded->sample->cols, fresh.sample->cols);
  Case ci = c;
  ci.impl = "fa2-deterministic";
  CheckRecord a = run_check(ci, *find_implementation(ci.impl), *loaded, opt);
  CheckRecord b = run_check(ci, *find_implementation(ci.impl), fresh, opt);
  a.seconds_impl = a.seconds_reference = a.seconds_bounds = b.seconds_impl = b.seconds_reference = b.seconds_bounds = 0;
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_FALSE(a.sampled_rows.empty());
  fs::remove(file);
}

TEST(CaseContextFile, RefusesAnotherCaseOtherOptionsAndDamage) {
  const Case c = gqa_causal_backward();
  const std::string file = path("refuse");
  save_case_context(file, c, {}, prepare_case(c, {}, true));
  Case other_seed = c;
  other_seed.seed = 12;
  EXPECT_FALSE(load_case_context(file, other_seed, {}).has_value());
  Case forward = c;
  forward.backward = false;
  EXPECT_FALSE(load_case_context(file, forward, {}).has_value());
  CheckOptions strict;
  strict.reference.rel_requirement = 0x1p-60;
  EXPECT_FALSE(load_case_context(file, c, strict).has_value());
  Case other_impl = c;
  other_impl.impl = "fa2";  // the implementation is not part of the key
  EXPECT_TRUE(load_case_context(file, other_impl, {}).has_value());

  const auto size = fs::file_size(file);
  {  // one flipped bit in the middle (a reference value)
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char byte = 0;
    f.read(&byte, 1);
    byte ^= 0x10;
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write(&byte, 1);
  }
  EXPECT_FALSE(load_case_context(file, c, {}).has_value());
  fs::resize_file(file, size / 3);
  EXPECT_FALSE(load_case_context(file, c, {}).has_value());
  EXPECT_FALSE(load_case_context(file + ".missing", c, {}).has_value());
  fs::remove(file);
}

}  // namespace
}  // namespace flashproof
