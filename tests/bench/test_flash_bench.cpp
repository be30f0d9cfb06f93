// bench_flash and the comparison scripts, run as subprocesses the way the GPU session will
// run them (label `emulated`):
// - bench_flash --target emulated --tiny: exit 0, every (kernel, direction, dtype, causal, head_dim,
//   seqlen) row once, finite positive times, TFLOP/s = FLOPs / median, FLOPs checked by hand;
// - bench_flash --dry-run: the full-size grid is FlashAttention's (batch = 16384 / seqlen, heads =
//   2048 / head_dim), FLOPs by hand, head-dim buckets not built skipped;
// - bad command lines exit 2 with one line;
// - compare_flash_torch.py on synthetic results: TFLOP/s, ratios, and each target met / missed /
//   no data, the thresholds included;
// - torch_sdpa_bench.py without torch: --help, and --list-shapes with the same FLOPs as bench_flash.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.h"
#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/api.h"
#include "kernels/fa2/api.h"

namespace flashproof {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("flashproof-test-flash-bench-" + std::to_string(getpid()) + "-" + test->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A path as one shell word (built with +=, which GCC 12's -Wrestrict does not misread).
std::string quoted(const std::string& path) {
  std::string word = "'";
  word += path;
  word += '\'';
  return word;
}

struct Finished {
  int exit_code = -1;
  std::string out, err;
};

Finished run_command(const ScratchDir& dir, const std::string& command) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const int status = std::system((command + " >" + quoted(out) + " 2>" + quoted(err)).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out), read_text(err)};
}

Finished run_bench(const ScratchDir& dir, const std::string& args) {
  return run_command(dir, quoted(BENCH_FLASH_BIN) + " " + args);
}

bool python_available() { return std::string(PYTHON3_BIN).size() > 0; }

Finished run_script(const ScratchDir& dir, const std::string& script, const std::string& args) {
  return run_command(dir, quoted(PYTHON3_BIN) + " " + quoted(std::string(BENCH_SOURCE_DIR) + "/" + script) + " " + args);
}

// ---- reading the JSON rows ----

// A member as text: a string's value, a number or boolean as JSON writes it, "" for null.
std::string text_of(const json::Value& row, const char* key) {
  const json::Value* f = json::find(row, key);
  if (f == nullptr) return "<missing " + std::string(key) + ">";
  if (f->is_null()) return "";
  if (f->is_string()) return f->get<std::string>();
  return f->dump();
}

double number_of(const json::Value& row, const char* key) {
  const json::Value* f = json::find(row, key);
  return f == nullptr ? std::nan("") : json::number(*f).value_or(std::nan(""));
}

// kernel direction dtype causal head_dim seqlen, e.g. "fa2 fwd fp16 false 64 128".
std::string row_key(const json::Value& row) {
  return text_of(row, "kernel") + " " + text_of(row, "direction") + " " + text_of(row, "dtype") + " " +
         text_of(row, "causal") + " " + text_of(row, "head_dim") + " " + text_of(row, "seqlen");
}

std::map<std::string, json::Value> rows_by_key(const std::string& json_path) {
  const json::Value rows = json::parse(read_text(json_path));
  EXPECT_TRUE(rows.is_array()) << json_path;
  std::map<std::string, json::Value> by_key;
  for (const json::Value& row : rows) {
    EXPECT_FALSE(by_key.contains(row_key(row))) << "row twice: " << row_key(row);
    by_key[row_key(row)] = row;
  }
  return by_key;
}

bool bucket_built(const std::string& kernel, int head_dim) {
  if (kernel == "fa2") return kernels::fa2_bucket_built(algo::head_dim_bucket(head_dim));
  return kernels::fa1_bucket_built(algo::fa1_head_dim_bucket(head_dim));
}

// FLOPs of FlashAttention's benchmark, by hand for each row below.
void expect_flops(const std::map<std::string, json::Value>& rows, const std::string& key, double flops) {
  const auto row = rows.find(key);
  ASSERT_NE(row, rows.end()) << "no row " << key;
  EXPECT_EQ(number_of(row->second, "flops"), flops) << key;
}

// ---- bench_flash on the emulator ----

void expect_measured(const json::Value& row) {
  const std::string key = row_key(row);
  EXPECT_EQ(text_of(row, "status"), "ok") << key << ": " << text_of(row, "reason");
  const double median = number_of(row, "median_ms"), lo = number_of(row, "min_ms"), hi = number_of(row, "max_ms");
  EXPECT_TRUE(std::isfinite(median) && std::isfinite(lo) && std::isfinite(hi)) << key;
  EXPECT_GT(lo, 0) << key;
  EXPECT_LE(lo, median) << key;
  EXPECT_LE(median, hi) << key;
  EXPECT_NEAR(number_of(row, "tflops"), number_of(row, "flops") / (median * 1e-3) / 1e12,
              1e-6 * std::abs(number_of(row, "tflops"))) << key;
  EXPECT_EQ(number_of(row, "batch"), 1) << key;
  EXPECT_EQ(number_of(row, "heads"), 2) << key;
}

// How many lines follow the table's header ("kern dir ...") to the end, if each is a row of the
// table (starts with a kernel name); 0 otherwise.
std::size_t table_lines_at_the_end(const std::string& out) {
  const std::size_t header = out.rfind("\nkern dir");
  if (header == std::string::npos) return 0;
  std::istringstream lines(out.substr(out.find('\n', header + 1) + 1));
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    if (line.rfind("fa2 ", 0) != 0 && line.rfind("fa1 ", 0) != 0) return 0;
  return count;
}

TEST(BenchFlashEmulated, TinyRunMeasuresEveryRowWithFinitePositiveTimes) {
  ScratchDir dir;
  const std::string json = dir.file("tiny.json");
  // One head dim and no warm-up keep this well under a minute on a loaded 2-core machine; the
  // shapes of the other head dims, and what a narrowed build skips, are checked by the dry run.
  const Finished run = run_bench(dir, "--target emulated --tiny --head-dims 64 --warmup 0 --json " + quoted(json));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("emulated times are meaningless"), std::string::npos) << run.out;
  const std::map<std::string, json::Value> rows = rows_by_key(json);
  EXPECT_EQ(table_lines_at_the_end(run.out), rows.size()) << "the table, a line per row, must come last:\n" << run.out;
  std::size_t expected = 0;
  for (const char* kernel : {"fa2", "fa1"})
    for (const char* direction : {"fwd", "bwd"})
      for (const char* dtype : {"fp16", "bf16"})
        for (const char* causal : {"false", "true"})
          for (int head_dim : {64})
            for (int seqlen : {64, 128}) {
              ++expected;
              const std::string key = std::string(kernel) + " " + direction + " " + dtype + " " + causal + " " +
                                      std::to_string(head_dim) + " " + std::to_string(seqlen);
              const auto row = rows.find(key);
              if (row == rows.end()) {
                ADD_FAILURE() << "no row " << key;
                continue;
              }
              expect_measured(row->second);
              EXPECT_EQ(text_of(row->second, "target"), "emulated") << key;
              EXPECT_EQ(number_of(row->second, "repeats"), 2) << key;
              EXPECT_NE(text_of(row->second, "commit"), "") << key;
            }
  EXPECT_EQ(rows.size(), expected);

  // 4 * batch 1 * heads 2 * seqlen^2 * head_dim; halved when causal; backward 2.5x.
  expect_flops(rows, "fa2 fwd fp16 false 64 128", 4.0 * 2 * 128 * 128 * 64);             // 8388608
  expect_flops(rows, "fa2 fwd bf16 true 64 128", 4.0 * 2 * 128 * 128 * 64 / 2);          // 4194304
  expect_flops(rows, "fa2 bwd fp16 false 64 128", 2.5 * 4 * 2 * 128 * 128 * 64);         // 20971520
  expect_flops(rows, "fa1 bwd bf16 true 64 64", 2.5 * 4 * 2 * 64 * 64 * 64 / 2);         // 2621440
}

// ---- the full-size grid, planned only ----

TEST(BenchFlashDryRun, FullSizeGridIsFlashAttentionsWithItsFlops) {
  ScratchDir dir;
  const std::string json = dir.file("plan.json");
  const Finished run = run_bench(dir, "--dry-run --json " + quoted(json));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::map<std::string, json::Value> rows = rows_by_key(json);
  EXPECT_EQ(rows.size(), 2u * 2 * 2 * 2 * 3 * 6);  // kernels, directions, dtypes, causal, head dims, seqlens
  for (const auto& [key, row] : rows) {
    EXPECT_EQ(number_of(row, "batch") * number_of(row, "seqlen"), 16384) << key;
    EXPECT_EQ(number_of(row, "heads") * number_of(row, "head_dim"), 2048) << key;
    EXPECT_EQ(text_of(row, "median_ms"), "") << key;  // null: nothing ran
    // A head-dim bucket this build leaves out is skipped with the CMake option to change.
    const bool built = bucket_built(text_of(row, "kernel"), static_cast<int>(number_of(row, "head_dim")));
    EXPECT_EQ(text_of(row, "status"), built ? "planned" : "skipped") << key;
    if (!built) {
      EXPECT_NE(text_of(row, "reason").find("_HEAD_DIMS"), std::string::npos) << key;
    }
  }
  // seqlen 2048, head_dim 128: batch 8, heads 16.
  expect_flops(rows, "fa2 fwd fp16 false 128 2048", 4.0 * 8 * 16 * 2048 * 2048 * 128);         // 274877906944
  expect_flops(rows, "fa1 bwd bf16 true 128 2048", 2.5 * 4 * 8 * 16 * 2048 * 2048 * 128 / 2);  // 343597383680
  // seqlen 16384, head_dim 64: batch 1, heads 32.
  expect_flops(rows, "fa2 fwd bf16 false 64 16384", 4.0 * 1 * 32 * 16384.0 * 16384 * 64);      // 2199023255552
}

// ---- bad command lines ----

TEST(BenchFlashOptions, BadInputExitsTwoWithOneLine) {
  ScratchDir dir;
  for (const char* args : {"--causal maybe", "--kernels fa3", "--head-dims 60", "--seqlens 32768", "--repeats 0",
                           "--frobnicate", "--json"}) {
    const Finished run = run_bench(dir, args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_EQ(run.out, "") << args;
    EXPECT_EQ(run.err.rfind("bench_flash: ", 0), 0u) << args << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
  }
}

// ---- compare_flash_torch.py on synthetic results ----

std::string measurement(const std::string& kernel, const std::string& direction, bool causal, int seqlen,
                        const std::string& tflops_or_status, const std::string& device = "Test GPU") {
  const bool ok = tflops_or_status.find_first_not_of("0123456789.") == std::string::npos;
  return "{\"kernel\": \"" + kernel + "\", \"direction\": \"" + direction +
         "\", \"dtype\": \"fp16\", \"head_dim\": 128, \"seqlen\": " + std::to_string(seqlen) +
         ", \"batch\": 1, \"heads\": 16, \"causal\": " + (causal ? "true" : "false") + ", \"status\": \"" +
         (ok ? "ok" : tflops_or_status) + "\", \"reason\": " + (ok ? "null" : "\"refused by test\"") +
         ", \"tflops\": " + (ok ? tflops_or_status : "null") + ", \"device\": \"" + device + "\"}";
}

std::string json_array(const std::vector<std::string>& objects) {
  std::string text = "[";
  for (const std::string& o : objects) text += (text.size() > 1 ? ",\n" : "\n") + o;
  return text + "\n]\n";
}

// The table row of a shape within the section of one direction.
std::string table_row(const std::string& markdown, const std::string& section, const std::string& row_start) {
  const std::size_t at = markdown.find(section);
  if (at == std::string::npos) return "<no section " + section + ">";
  const std::size_t row = markdown.find("\n" + row_start, at);
  if (row == std::string::npos) return "<no row " + row_start + ">";
  return markdown.substr(row + 1, markdown.find('\n', row + 1) - row - 1);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CompareFlashTorch, RatiosAndTargetsMetMissedOrWithoutData) {
  if (!python_available()) GTEST_SKIP() << "python3 not found";
  ScratchDir dir;
  write_text(dir.file("ours.json"), json_array({
      measurement("fa2", "fwd", false, 1024, "150"), measurement("fa1", "fwd", false, 1024, "60"),
      measurement("fa2", "fwd", false, 512, "100"), measurement("fa1", "fwd", false, 512, "80"),
      measurement("fa2", "fwd", true, 1024, "140"), measurement("fa1", "fwd", true, 1024, "70"),
      measurement("fa2", "bwd", false, 1024, "100"), measurement("fa2", "bwd", false, 2048, "90")}));
  write_text(dir.file("torch.json"), json_array({
      measurement("torch-flash", "fwd", false, 1024, "120"), measurement("torch-efficient", "fwd", false, 1024, "unsupported"),
      measurement("torch-flash", "fwd", false, 512, "200"), measurement("torch-flash", "fwd", true, 1024, "unsupported"),
      measurement("torch-flash", "bwd", false, 1024, "125"), measurement("torch-flash", "bwd", false, 2048, "100")}));
  const Finished run = run_script(dir, "compare_flash_torch.py", quoted(dir.file("ours.json")) + " " +
                                                                     quoted(dir.file("torch.json")) + " -o " +
                                                                     quoted(dir.file("table.md")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string md = read_text(dir.file("table.md"));

  // Columns: causal, head_dim, seqlen, fa2, fa1, torch-flash, torch-efficient, then the ratios
  // fa2/flash, fa2/efficient, fa1/flash, fa1/efficient, fa1/fa2, then the targets.
  const std::string fwd_1024 = table_row(md, "## Forward, fp16", "| no | 128 | 1024 |");
  EXPECT_TRUE(contains(fwd_1024, "| 150.0 | 60.0 | 120.0 | unsupported | 1.25x | - | 0.50x | - | 0.40x |")) << fwd_1024;
  EXPECT_TRUE(contains(fwd_1024, "fa2 vs torch-flash: met (1.25x)")) << fwd_1024;
  EXPECT_TRUE(contains(fwd_1024, "fa1 vs fa2: missed (0.40x)")) << fwd_1024;
  // Below seqlen 1024 the torch-flash target does not apply; FA1's does (0.80x >= 0.5x).
  const std::string fwd_512 = table_row(md, "## Forward, fp16", "| no | 128 | 512 |");
  EXPECT_TRUE(contains(fwd_512, "| 0.50x |")) << fwd_512;
  EXPECT_FALSE(contains(fwd_512, "torch-flash:")) << fwd_512;
  EXPECT_TRUE(contains(fwd_512, "fa1 vs fa2: met (0.80x)")) << fwd_512;
  // torch-flash refused: no data, not met.
  const std::string fwd_causal = table_row(md, "## Forward, fp16", "| yes | 128 | 1024 |");
  EXPECT_TRUE(contains(fwd_causal, "fa2 vs torch-flash: no data")) << fwd_causal;
  EXPECT_TRUE(contains(fwd_causal, "fa1 vs fa2: met (0.50x)")) << fwd_causal;  // exactly the threshold
  // Backward: 0.80x < 0.9x missed; exactly 0.90x met.
  const std::string bwd_1024 = table_row(md, "## Backward, fp16", "| no | 128 | 1024 |");
  EXPECT_TRUE(contains(bwd_1024, "fa2 vs torch-flash: missed (0.80x)")) << bwd_1024;
  const std::string bwd_2048 = table_row(md, "## Backward, fp16", "| no | 128 | 2048 |");
  EXPECT_TRUE(contains(bwd_2048, "fa2 vs torch-flash: met (0.90x)")) << bwd_2048;

  EXPECT_TRUE(contains(md, "| FA2 fwd >= 1.0x torch-flash (seqlen >= 1024) | 1 | 0 | 1 |")) << md;
  EXPECT_TRUE(contains(md, "| FA2 bwd >= 0.9x torch-flash (seqlen >= 1024) | 1 | 1 | 0 |")) << md;
  EXPECT_TRUE(contains(md, "| FA1 fwd >= 0.5x our FA2 | 2 | 1 | 0 |")) << md;
  EXPECT_TRUE(contains(md, "- torch-efficient (unsupported): refused by test")) << md;
  EXPECT_FALSE(contains(md, "WARNING")) << md;
}

TEST(CompareFlashTorch, WarnsWhenTheDevicesDiffer) {
  if (!python_available()) GTEST_SKIP() << "python3 not found";
  ScratchDir dir;
  write_text(dir.file("ours.json"), json_array({measurement("fa2", "fwd", false, 1024, "150", "GPU A")}));
  write_text(dir.file("torch.json"), json_array({measurement("torch-flash", "fwd", false, 1024, "120", "GPU B")}));
  const Finished run =
      run_script(dir, "compare_flash_torch.py", quoted(dir.file("ours.json")) + " " + quoted(dir.file("torch.json")));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "WARNING: measured on different devices (GPU A, GPU B)")) << run.out;
}

// ---- torch_sdpa_bench.py without torch ----

TEST(TorchSdpaBench, HelpAndShapeListNeedNoTorchAndCountFlopsAsBenchFlash) {
  if (!python_available()) GTEST_SKIP() << "python3 not found";
  ScratchDir dir;
  const Finished help = run_script(dir, "torch_sdpa_bench.py", "--help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_TRUE(contains(help.out, "--backends")) << help.out;

  const Finished list = run_script(dir, "torch_sdpa_bench.py", "--list-shapes --dtypes fp16 --head-dims 64,128 --seqlens 128,2048");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::map<std::string, double> flops;
  for (const json::Value& c : json::parse(list.out)) {
    EXPECT_EQ(number_of(c, "batch") * number_of(c, "seqlen"), 16384);
    EXPECT_EQ(number_of(c, "heads") * number_of(c, "head_dim"), 2048);
    flops[text_of(c, "direction") + " " + text_of(c, "causal") + " " + text_of(c, "head_dim") + " " +
          text_of(c, "seqlen")] = number_of(c, "flops");
  }
  EXPECT_EQ(flops.size(), 2u * 2 * 2 * 2);
  EXPECT_EQ(flops["fwd false 128 2048"], 4.0 * 8 * 16 * 2048 * 2048 * 128);
  EXPECT_EQ(flops["bwd true 128 2048"], 2.5 * 4 * 8 * 16 * 2048 * 2048 * 128 / 2);
  EXPECT_EQ(flops["fwd true 64 128"], 4.0 * 128 * 32 * 128 * 128 * 64 / 2);

  const Finished bad = run_script(dir, "torch_sdpa_bench.py", "--causal maybe");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace flashproof
