// The flashproof command end to end: good cases, JSON, case files and replay, and one-line errors
// with exit status 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>
#include <string>
#include <utility>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Result {
  int status;
  std::string out, err;
};

Result run(const std::string& args) {
  // ctest runs the tests of this file in parallel processes: one stderr file per process and call.
  static int calls = 0;
  const std::string err_file = testing::TempDir() + "flashproof_stderr_" + std::to_string(getpid()) + "_" +
                               std::to_string(++calls) + ".txt";
  const std::string cmd = std::string(FLASHPROOF_BIN) + " " + args + " 2>" + err_file;
  Result r{};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  const int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (FILE* e = fopen(err_file.c_str(), "r")) {
    while (std::size_t n = fread(buf.data(), 1, buf.size(), e)) r.err.append(buf.data(), n);
    fclose(e);
  }
  std::remove(err_file.c_str());
  return r;
}

// Bad input: exit status 2 and one line on stderr that says `message`.
void expect_usage_error(const std::string& args, const Result& r, const std::string& message) {
  EXPECT_EQ(r.status, 2) << args;
  EXPECT_NE(r.err.find(message), std::string::npos) << args << " -> " << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": not one line: " << r.err;
}

TEST(Cli, ListNamesTheNaiveBaseline) {
  const Result r = run("list");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("naive\thost"), std::string::npos);
}

TEST(Cli, CheckPassesTheNaiveBaselineForwardAndBackward) {
  const Result r = run("check --impl naive --dtype bf16 --heads 4 --kv-heads 2 --seqlen-q 9 "
                       "--seqlen-k 17 --head-dim 40 --causal --dist scaled:3 --seed 4 --backward");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: pass"), std::string::npos);
  EXPECT_NE(r.out.find("dK"), std::string::npos);
}

// Not judged exits 0 like pass unless --require-judged asks for 4 (docs/spec.md "The command line"):
// fa2 at fp16 logits near 1e5, where dV's bound is vacuous and the dtype computation's scores
// overflow fp16 (so the second tier cannot judge it either).
TEST(Cli, RequireJudgedMakesNotJudgedExit4) {
  const std::string args = "check --impl fa2 --dtype fp16 --seqlen-q 16 --seqlen-k 16 --head-dim 32 "
                           "--dist large-logits:1e9 --backward";  // fp32 LSE ulp 64: dV not judged
  const Result plain = run(args);
  if (plain.status == 2 && plain.err.find("is not built") != std::string::npos) GTEST_SKIP() << plain.err;
  EXPECT_EQ(plain.status, 0) << plain.out << plain.err;
  EXPECT_NE(plain.out.find("verdict: not-judged"), std::string::npos) << plain.out;
  const Result strict = run(args + " --require-judged");
  EXPECT_EQ(strict.status, 4) << strict.out << strict.err;
  // A judged pass still exits 0 with it, and a failure 1.
  EXPECT_EQ(run("check --impl naive --seqlen-q 5 --seqlen-k 7 --head-dim 8 --backward --require-judged").status, 0);
  const std::string dir = testing::TempDir() + "require_judged_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  const Result fuzz = run("fuzz --seed 3 --cases 12 --impl naive --dtype bf16 --max-seqlen 16 --out " + dir + " --require-judged");
  // 4 exactly when the summary counts a not-judged record (and nothing failed).
  const std::size_t at = fuzz.out.find(" not judged, ");
  ASSERT_NE(at, std::string::npos) << fuzz.out << fuzz.err;
  const std::size_t start = fuzz.out.rfind(", ", at) + 2;
  const long not_judged = std::stol(fuzz.out.substr(start, at - start));
  EXPECT_EQ(fuzz.status, not_judged > 0 ? 4 : 0) << fuzz.out << fuzz.err;
  EXPECT_NE(fuzz.out.find("fuzz: judged (pass or fail) "), std::string::npos) << fuzz.out;
  EXPECT_NE(fuzz.out.find("per tensor: O "), std::string::npos) << fuzz.out;
  std::filesystem::remove_all(dir);
}

TEST(Cli, JsonRecord) {
  const Result r = run("check --json --seqlen-q 5 --seqlen-k 3 --head-dim 8 --window=1,0");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_NE(r.out.find("\"window_left\": 1"), std::string::npos);
  EXPECT_NE(r.out.find("\"verdict\": \"pass\""), std::string::npos);
}

TEST(Cli, BadInputIsAOneLineErrorWithStatus2) {
  const char* cases[][2] = {
      {"check --heads 6 --kv-heads 4", "heads_q (6) must be a multiple of heads_kv (4)"},
      {"check --dtype fp8", "unsupported dtype 'fp8'"},
      {"check --frobnicate", "unknown option '--frobnicate'"},
      {"check --seqlen-q 0", "--seqlen-q must be >= 1"},
      {"check --seqlen-q 12x", "--seqlen-q expects a number"},
      {"check --head-dim 300", "head_dim (300) must be at most 256"},
      {"check --window 3", "--window expects L,R"},
      {"check --causal --window 2,3", "--causal means a right window side of 0"},
      {"check --dist cauchy", "unknown distribution 'cauchy'"},
      {"check --scale inf", "--scale expects a finite fp32 number"},
      {"check --impl fa9", "unknown implementation 'fa9'"},
      {"check --seed", "--seed needs a value"},
      {"check --schedule -1", "--schedule expects a number, got '-1'"},
      {"check --schedule 18446744073709551616", "--schedule is out of range"},
      {"check --precision 8", "reference precision (8 bits) must be between 64 and 65536"},
      {"prove no_such_proof", "no proof named 'no_such_proof'"},
      {"prove --timeout 0", "--timeout must be >= 1"},
      {"prove --smt2 /proc/flashproof", "--smt2: cannot create directory"},
      {"prove --frobnicate", "unknown option '--frobnicate' for prove"},
      {"check --save-case /proc/flashproof/case.json", "cannot write case file /proc/flashproof/case.json: "},
      {"replay", "replay needs a case file"},
      {"replay a.json b.json", "replay takes one case file, got 'a.json' and 'b.json'"},
      {"replay --frobnicate x.json", "unknown option '--frobnicate' for replay"},
      {"replay --threads 0 x.json", "--threads must be >= 1"},
      {"replay /nonexistent/case.json", "case file /nonexistent/case.json: does not exist"},
      {"replay /proc", "case file /proc: is a directory"},
      {"fuzz --seed 1 --cases 3", "fuzz needs --out DIR"},
      {"fuzz --out /tmp/x --cases 3", "fuzz needs --seed S"},
      {"fuzz --seed 1 --out /tmp/fp_x", "give the campaign's size: --cases N or --minutes M"},
      {"fuzz --seed 1 --cases 3 --minutes 1 --out /tmp/fp_x", "give --cases or --minutes, not both"},
      {"fuzz --seed 1 --minutes 1e30 --out /tmp/fp_x", "--minutes must be at most 5259600 (ten years), got 1e+30"},
      {"fuzz --seed 1 --minutes nan --out /tmp/fp_x", "--minutes must be positive, got nan"},
      {"fuzz --seed 1 --minutes 2x --out /tmp/fp_x", "--minutes expects a number, got '2x'"},
      {"fuzz --seed 1 --cases 3 --shard 3/3 --out /tmp/fp_x", "shard index 3 is not below the count 3"},
      {"fuzz --seed 1 --cases 3 --shard 2 --out /tmp/fp_x", "--shard expects i/n"},
      {"fuzz --seed 1 --cases 3 --impl fa9 --out /tmp/fp_x", "unknown implementation 'fa9'"},
      {"fuzz --seed 1 --cases 3 --dtype fp8 --out /tmp/fp_x", "--dtype: unknown dtype 'fp8'"},
      {"fuzz --seed 1 --cases 3 --backward maybe --out /tmp/fp_x", "--backward expects yes, no or both"},
      {"fuzz --seed 1 --cases 3 --frobnicate --out /tmp/fp_x", "unknown option '--frobnicate' for fuzz"},
      {"fuzz --seed 1 --cases 3 --out /proc/fp_campaign", "cannot create the campaign directory /proc/fp_campaign"},
      {"frobnicate", "unknown command 'frobnicate'"},
      {"", "missing command"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    expect_usage_error(args, r, message);
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// Hostile values (docs/bad-input.md): lists with empty or repeated items, integers past what the option
// is stored in, option values and file names with line breaks and escape sequences. Each is one
// printable line on stderr and exit status 2.
TEST(Cli, HostileInputIsOneEscapedLineWithStatus2) {
  const std::string out = " --out " + testing::TempDir() + "fp_hostile_" + std::to_string(getpid());
  const char* cases[][2] = {
      {"fuzz --seed 1 --cases 3 --impl ''", "--impl: empty name in ''"},
      {"fuzz --seed 1 --cases 3 --impl naive,", "--impl: empty name in 'naive,'"},
      {"fuzz --seed 1 --cases 3 --impl naive,naive --jobs 2", "--impl: 'naive' is given twice"},
      {"fuzz --seed 1 --cases 3 --dtype fp16,,bf16", "--dtype: empty name in 'fp16,,bf16'"},
      {"fuzz --seed 1 --cases 3 --dtype bf16,bf16", "--dtype: 'bf16' is given twice"},
      {"fuzz --seed 1 --cases 3 --jobs 4294967297", "--jobs must be at most 1024, got 4294967297"},
      {"check --precision 4294967424", "--precision must be at most 65536, got 4294967424"},
      {"check --threads 4294967297", "--threads must be at most 4096, got 4294967297"},
      {"replay --threads 4294967297 x.json", "--threads must be at most 4096, got 4294967297"},
      {"check --seqlen-q 99999999999999999999", "--seqlen-q is out of range, got '99999999999999999999'"},
      {"check --impl \"$(printf 'x\\033[31m\\ny')\"", "unknown implementation 'x\\x1b[31m\\ny'"},
      {"replay \"$(printf '/nonexistent/a\\nb\\rc')\"", "case file /nonexistent/a\\nb\\rc: does not exist"},
      {"check --dtype \"$(printf '\\302\\233')\"", "unsupported dtype '\\xc2\\x9b'"},  // C1 CSI in UTF-8
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(std::string(args) + (std::string(args).starts_with("fuzz") ? out : ""));
    expect_usage_error(args, r, message);
    EXPECT_TRUE(std::none_of(r.err.begin(), r.err.end() - 1, [](char ch) { return ch == '\x1b' || ch == '\r'; }))
        << args;
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// Every option takes --opt=value as well as --opt value, prove's included.
TEST(Cli, ProveTakesOptEqualsValue) {
  const Result r = run("prove --timeout=5 --list");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("online_softmax"), std::string::npos) << r.out;
  const Result bad = run("prove --list=yes");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--list takes no value"), std::string::npos) << bad.err;
}

// One quick proof end to end: verdict line, exit status, and SMT-LIB files that the z3 command
// replays to the same answers (unsat = proved for the shipped query, sat for the twin's).
TEST(Cli, ProveWritesReplayableSmtLib) {
  const std::string dir = testing::TempDir() + "flashproof_smt2";
  std::filesystem::remove_all(dir);
  const Result r = run("prove backward_prob --smt2 " + dir);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("proved         backward_prob"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("counterexample"), std::string::npos) << r.out;
  std::vector<std::filesystem::path> shipped, twin;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    (name.find(".twin.") != std::string::npos ? twin : shipped).push_back(e.path());
  }
  ASSERT_EQ(shipped.size(), 1u);
  ASSERT_EQ(twin.size(), 1u);
  const auto z3_answer = [](const std::filesystem::path& file) {
    FILE* p = popen(("z3 " + file.string() + " 2>&1").c_str(), "r");
    std::string out;
    std::array<char, 256> buf;
    while (std::size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
    pclose(p);
    return out;
  };
  EXPECT_EQ(z3_answer(shipped[0]), "unsat\n");
  EXPECT_EQ(z3_answer(twin[0]), "sat\n");
}

TEST(Cli, ProveListNamesEveryProof) {
  const Result r = run("prove --list");
  EXPECT_EQ(r.status, 0);
  for (const char* name : {"online_softmax_fa2", "online_softmax_fa1", "fa1_equals_fa2", "merge_states",
                           "backward_prob", "block_skip_forward", "block_skip_backward", "mask_free_tiles"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "flashproof_" + std::to_string(getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  fputs(text.c_str(), f);
  fclose(f);
}

// The JSON record without the line of run times (the only fields that vary run to run).
std::string without_timing(const std::string& json) {
  std::string out;
  std::size_t at = 0;
  while (at < json.size()) {
    const std::size_t end = std::min(json.find('\n', at), json.size());
    const std::string line = json.substr(at, end - at);
    if (line.rfind("  \"seconds\": ", 0) != 0) out += line + "\n";
    at = end + 1;
  }
  return out;
}

// check --save-case writes the case; replay re-runs it to the identical record (the case, every
// error, tolerance and verdict), also with non-default reference options (sampling, MPFR). At
// logits of 300 the naive model's dQ and dK bounds reach the size of dQ and dK, but not of their
// summands: judged (docs/error-bounds.md "Not judged").
TEST(Cli, ReplayOfASavedCaseGivesTheIdenticalRecord) {
  std::string not_built;  // a narrowed build's refusal of a case whose head-dim bucket it left out
  for (const auto& [options, verdict] : std::vector<std::pair<std::string, std::string>>{
       {"--impl naive --dtype bf16 --heads 4 --kv-heads 2 --seqlen-q 9 --seqlen-k 17 "
        "--head-dim 40 --window 3,2 --scale 0.3 --dist large-logits:300 "
        "--seed 18446744073709551615 --backward --sample 5", "pass"},
       {"--dtype fp32 --seqlen-q 6 --seqlen-k 5 --head-dim 8 --causal --dist growing-max:7.5 "
        "--seed 9007199254740993 --reference mpfr --precision 150", "pass"},
       // fa2's atomic dQ under an explored emulator schedule: the same bits again on replay.
       {"--impl fa2 --seqlen-q 20 --seqlen-k 300 --heads 2 --kv-heads 1 --head-dim 32 --backward "
        "--schedule 12345", "pass"}}) {
    const std::string file = temp_path("saved_case.json");
    const Result checked = run("check --json --save-case " + file + " " + options);
    if (checked.status == 2 && checked.err.find("is not built") != std::string::npos) {
      not_built += checked.err;
      continue;
    }
    ASSERT_EQ(checked.status, 0) << options << "\n" << checked.out << checked.err;
    const Result replayed = run("replay --json " + file);
    ASSERT_EQ(replayed.status, 0) << options << "\n" << replayed.out << replayed.err;
    EXPECT_NE(without_timing(checked.out).find("\"verdict\": \"" + verdict + "\""), std::string::npos) << options;
    EXPECT_NE(checked.out.find("\"seconds\""), std::string::npos);
    EXPECT_EQ(without_timing(replayed.out), without_timing(checked.out)) << options;
    const Result table = run("replay " + file);
    EXPECT_EQ(table.status, 0);
    EXPECT_EQ(table.out.rfind("case file: " + file + "\n", 0), 0u) << table.out;
    EXPECT_NE(table.out.find("verdict: " + verdict + "\n"), std::string::npos) << table.out;
    std::remove(file.c_str());
  }
  if (!not_built.empty()) GTEST_SKIP() << "left out: " << not_built;
}

std::string hand_written_case(const std::string& check_options, const std::string& dist = "normal",
                              const std::string& impl = "naive") {
  return R"({"format": "flashproof-case", "version": 1, "note": "property x failed; RC_PARAMS=\"reproduce=abc\"",
  "impl": ")" + impl + R"(", "dtype": "fp16", "batch": 1, "heads_q": 2, "heads_kv": 1, "seqlen_q": 7,
  "seqlen_k": 9, "head_dim": 16, "window_left": -1, "window_right": -1, "scale": null,
  "dist": ")" + dist + R"(", "seed": "5", "backward": false, "check": {)" + check_options + "}}\n";
}

// No implementation in this binary fails, so the failing replay is the naive baseline judged by
// saved check options that admit no error at all (k = 0, no floor): the options are honoured (the
// accuracy regression is reported; with a zero tolerance the reference's bound is not far below
// it, so the verdict is fail and the exit status 1), and the note is printed.
TEST(Cli, ReplayJudgesWithTheSavedOptions) {
  const std::string file = temp_path("strict_case.json");
  write_file(file, hand_written_case(""));
  const Result lenient = run("replay " + file);
  EXPECT_EQ(lenient.status, 0) << lenient.out << lenient.err;
  EXPECT_NE(lenient.out.find("note: property x failed; RC_PARAMS=\"reproduce=abc\"\n"), std::string::npos)
      << lenient.out;
  write_file(file, hand_written_case(R"("k_forward": 0, "floor_ulps": 0, "lse_floor_ulps": 0)"));
  const Result strict = run("replay " + file);
  EXPECT_EQ(strict.status, 1) << strict.out << strict.err;
  EXPECT_NE(strict.out.find("verdict: fail"), std::string::npos) << strict.out;
  EXPECT_NE(strict.out.find("accuracy regression (rule 3, reported"), std::string::npos) << strict.out;
  EXPECT_EQ(lenient.out.find("accuracy regression (rule 3"), std::string::npos) << lenient.out;
  const Result strict_json = run("replay --json " + file);
  EXPECT_EQ(strict_json.status, 1);
  EXPECT_EQ(strict_json.out.front(), '{') << "no note before the JSON record";
  EXPECT_NE(strict_json.out.find("\"verdict\": \"fail\""), std::string::npos);
  EXPECT_NE(strict_json.out.find("\"regression\": true"), std::string::npos);
  std::remove(file.c_str());
}

// Out-of-domain inputs exit 0, as with check.
TEST(Cli, ReplayOfAnOutOfDomainCaseExitsZero) {
  const std::string file = temp_path("special_case.json");
  write_file(file, hand_written_case("", "special:0.25"));
  const Result r = run("replay " + file);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("verdict: out-of-domain"), std::string::npos) << r.out;
  std::remove(file.c_str());
}

// A packed batch (docs/spec.md "Packed batches") from the command line: the offsets alone give the
// lengths; the naive baseline passes it, and the same case file run by the naive variant that
// attends over the whole packed storage (rows see other sequences' keys) fails: the twin that
// shows the per-sequence mask is what is checked.
TEST(Cli, PackedBatchChecksPerSequenceAndItsTwinFails) {
  const std::string file = temp_path("packed_case.json");
  const Result checked = run("check --json --impl naive --cu-seqlens-q 0,3,10 --cu-seqlens-k 0,5,12 --heads 2 "
                             "--kv-heads 1 --head-dim 16 --causal --backward --save-case " + file);
  ASSERT_EQ(checked.status, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find("\"verdict\": \"pass\""), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("\"seqlen_q\": 10"), std::string::npos) << checked.out;
  EXPECT_NE(checked.out.find("\"seqlen_k\": 12"), std::string::npos) << checked.out;
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(text.find("\"cu_seqlens_k\""), std::string::npos) << text;
  const Result replayed = run("replay --json " + file);
  EXPECT_EQ(replayed.status, 0) << replayed.out << replayed.err;
  EXPECT_EQ(without_timing(replayed.out), without_timing(checked.out));
  const std::string impl = "\"impl\": \"naive\"";
  ASSERT_NE(text.find(impl), std::string::npos) << text;
  text.replace(text.find(impl), impl.size(), "\"impl\": \"naive-flawed:packed-ignores-sequences\"");
  write_file(file, text);
  const Result twin = run("replay " + file);
  EXPECT_EQ(twin.status, 1) << twin.out << twin.err;
  EXPECT_NE(twin.out.find("verdict: fail"), std::string::npos) << twin.out;
  std::remove(file.c_str());
}

// Offsets that are no packing of the tensors: one line, exit status 2, the problem's own message
// (the same as a case file's and Python's).
TEST(Cli, BadPackedOffsetsAreAOneLineErrorWithStatus2) {
  const char* cases[][2] = {
      {"check --cu-seqlens-q 0,3,x --cu-seqlens-k 0,5,12", "--cu-seqlens-q expects a number, got 'x'"},
      {"check --cu-seqlens-q 0,,10 --cu-seqlens-k 0,5,12", "--cu-seqlens-q expects a number, got ''"},
      {"check --cu-seqlens-q 0,3,10", "cu_seqlens_q and cu_seqlens_k must be given together"},
      {"check --cu-seqlens-q 0,3,10 --cu-seqlens-k 0,12", "cu_seqlens_q (3 offsets) and cu_seqlens_k (2) must describe as many sequences"},
      {"check --cu-seqlens-q 2,3,10 --cu-seqlens-k 0,5,12", "cu_seqlens_q must start at 0, not 2"},
      {"check --cu-seqlens-q 0,3,10 --cu-seqlens-k 0,5,3", "cu_seqlens_k must not decrease (offset 2 is 3 after 5)"},
      {"check --cu-seqlens-q 0,3,10 --cu-seqlens-k 0,5,12 --seqlen-q 12", "cu_seqlens_q must end at seqlen_q (12), not 10"},
      {"check --cu-seqlens-q 0,3,10 --cu-seqlens-k 0,5,12 --batch 2", "a packed batch is stored as batch 1"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    expect_usage_error(args, r, message);
    EXPECT_TRUE(r.out.empty()) << args;
  }
  // Consistent lengths given with the offsets are accepted (the twin of the last two rows).
  const Result given = run("check --cu-seqlens-q 0,3,10 --cu-seqlens-k 0,5,12 --seqlen-q 10 --seqlen-k 12 --head-dim 8");
  EXPECT_EQ(given.status, 0) << given.out << given.err;
}

// A paged KV cache (docs/spec.md "KV caches") from the command line: the baseline passes, the case
// file carries the cache, replay gives the same record, and the same file run by the variant that
// reads each cache to its capacity (NaN in the unused slots) fails.
TEST(Cli, KvCacheChecksTheUsedKeysAndItsTwinFails) {
  const std::string file = temp_path("kv_cache_case.json");
  const Result checked = run("check --json --impl naive --cache-seqlens 5,0,40 --seqlen-k 64 --seqlen-q 2 --heads 4 "
                             "--kv-heads 2 --head-dim 16 --causal --page-size 16 --num-pages 10 --block-table shuffled:3 "
                             "--num-splits 3 --save-case " + file);
  ASSERT_EQ(checked.status, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find("\"verdict\": \"pass\""), std::string::npos) << checked.out;
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (const char* field : {"\"cache_seqlens\"", "\"block_table\"", "\"num_pages\": 10", "\"num_splits\": 3"})
    EXPECT_NE(text.find(field), std::string::npos) << field << "\n" << text;
  const Result replayed = run("replay --json " + file);
  EXPECT_EQ(replayed.status, 0) << replayed.out << replayed.err;
  EXPECT_EQ(without_timing(replayed.out), without_timing(checked.out));
  const std::string impl = "\"impl\": \"naive\"";
  ASSERT_NE(text.find(impl), std::string::npos) << text;
  text.replace(text.find(impl), impl.size(), "\"impl\": \"naive-flawed:cache-allocated-length\"");
  write_file(file, text);
  const Result twin = run("replay " + file);
  EXPECT_EQ(twin.status, 1) << twin.out << twin.err;
  EXPECT_NE(twin.out.find("verdict: fail"), std::string::npos) << twin.out;
  std::remove(file.c_str());
}

// Appended keys from the command line: fa2 writes them and passes; the case file carries them.
TEST(Cli, AppendedKeysCheckThroughTheCache) {
  const std::string file = temp_path("kv_append_case.json");
  const Result checked = run("check --json --impl fa2 --cache-seqlens 15,0 --seqlen-new 2 --seqlen-k 64 --seqlen-q 2 "
                             "--heads 4 --kv-heads 2 --head-dim 64 --causal --page-size 16 --save-case " + file);
  ASSERT_EQ(checked.status, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find("\"verdict\": \"pass\""), std::string::npos) << checked.out;
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(text.find("\"seqlen_new\": 2"), std::string::npos) << text;
  const Result replayed = run("replay --json " + file);
  EXPECT_EQ(replayed.status, 0) << replayed.out << replayed.err;
  std::remove(file.c_str());
}

// A cache that does not fit its sizes, or a KV cache asked for its backward: one line, exit status 2.
TEST(Cli, BadKvCachesAreAOneLineErrorWithStatus2) {
  const char* cases[][2] = {
      {"check --cache-seqlens 5,x", "--cache-seqlens expects a number, got 'x'"},
      {"check --cache-seqlens 5,200", "cache_seqlens[1] (200) must be in [0, seqlen_k]"},
      {"check --cache-seqlens 5,6 --batch 3", "cache_seqlens must hold one length per sequence of the batch (3), not 2"},
      {"check --cache-seqlens 5 --page-size 24", "page_size (24) must be a multiple of 16 up to 256"},
      {"check --cache-seqlens 5 --page-size 512", "--page-size must be at most 256"},
      {"check --cache-seqlens 5 --seqlen-k 100 --page-size 16", "seqlen_k (100, the block table's capacity) must be a multiple of page_size (16)"},
      {"check --cache-seqlens 5 --seqlen-k 32 --page-size 16 --block-table 0,7", "block_table entry 1 (sequence 0, page 1) is 7, past the page pool [0, 2)"},
      {"check --cache-seqlens 5 --seqlen-k 32 --page-size 16 --block-table 0", "block_table must hold batch x seqlen_k / page_size = 2 entries, not 1"},
      {"check --num-pages 4", "--num-pages and --block-table need --page-size"},
      {"check --num-splits 2", "num_splits is for KV-cache problems"},
      {"check --cache-seqlens 5 --num-splits 129", "--num-splits must be at most 128"},
      {"check --cache-seqlens 5 --backward", "a KV-cache problem is forward only"},
      {"check --cache-seqlens 5 --cu-seqlens-q 0,128 --cu-seqlens-k 0,128", "cannot be combined"},
      {"check --cache-seqlens 5,126 --seqlen-new 3", "cache_seqlens[1] + seqlen_new (126 + 3) exceeds the cache's capacity"},
      {"check --seqlen-new 2", "seqlen_new (appended keys) is for KV-cache problems with cache_seqlens"},
      {"check --cache-seqlens 5 --seqlen-new x", "--seqlen-new expects a number, got 'x'"},
      {"check --cache-seqlens 3,3 --seqlen-k 32 --page-size 16 --block-table 0,1,0,1 --seqlen-new 1",
       "page 0 receives sequence 0's appended keys but another used entry maps it too"},
      // A pool past K's element limit: one line, no table of 2^40 entries allocated first.
      {"check --cache-seqlens 0 --seqlen-k 16 --seqlen-new 1 --page-size 16 --num-pages 1099511627776",
       "the page pool would have more than 2^34 elements"},
      // A pool inside it whose copies (K, V, appending: the implementation's and the expected ones)
      // exceed any machine's memory: refused before anything is allocated.
      {"check --cache-seqlens 0 --seqlen-k 16 --seqlen-new 1 --page-size 16 --num-pages 16777216",
       "the case needs about"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    expect_usage_error(args, r, message);
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// The soft cap and ALiBi from the command line (docs/spec.md "Soft cap and ALiBi"): the baseline
// passes, the case file carries both, and the same file run by the variant that drops the cap's
// 1 - tanh^2 or flips the bias's sign fails.
TEST(Cli, SoftcapAndAlibiCheckAndTheirTwinsFail) {
  const std::string file = temp_path("score_mod_case.json");
  const Result checked = run("check --json --impl naive --seqlen-q 7 --seqlen-k 19 --heads 4 --kv-heads 2 --head-dim 16 "
                             "--softcap 2.5 --alibi-slopes standard --dist scaled:8 --backward --save-case " + file);
  ASSERT_EQ(checked.status, 0) << checked.out << checked.err;
  EXPECT_NE(checked.out.find("\"verdict\": \"pass\""), std::string::npos) << checked.out;
  std::string text;
  {
    std::ifstream in(file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(text.find("\"softcap\": 2.5"), std::string::npos) << text;
  EXPECT_NE(text.find("\"alibi_slopes\": [0.25, 0.0625, 0.015625, 0.00390625]"), std::string::npos) << text;
  const Result replayed = run("replay --json " + file);
  EXPECT_EQ(replayed.status, 0) << replayed.out << replayed.err;
  EXPECT_EQ(without_timing(replayed.out), without_timing(checked.out));
  const std::string impl = "\"impl\": \"naive\"";
  ASSERT_NE(text.find(impl), std::string::npos) << text;
  for (const char* twin : {"softcap-missing-derivative", "alibi-wrong-sign"}) {
    std::string flawed = text;
    flawed.replace(flawed.find(impl), impl.size(), std::string("\"impl\": \"naive-flawed:") + twin + "\"");
    write_file(file, flawed);
    const Result r = run("replay " + file);
    EXPECT_EQ(r.status, 1) << twin << r.out << r.err;
    EXPECT_NE(r.out.find("verdict: fail"), std::string::npos) << twin << r.out;
  }
  std::remove(file.c_str());
}

TEST(Cli, BadSoftcapOrSlopesAreAOneLineErrorWithStatus2) {
  const char* cases[][2] = {
      {"check --softcap 0", "softcap (0.000000) must be a finite number > 0 (omit it for no cap)"},
      {"check --softcap -3", "softcap (-3.000000) must be a finite number > 0 (omit it for no cap)"},
      {"check --softcap inf", "--softcap expects a finite fp32 number, got 'inf'"},
      {"check --softcap 1e39", "--softcap expects a finite fp32 number, got '1e39'"},
      {"check --heads 4 --alibi-slopes 1,2,3", "alibi_slopes must hold one slope per query head (4), not 3"},
      {"check --heads 2 --alibi-slopes 1,nan", "--alibi-slopes expects a finite fp32 number, got 'nan'"},
      {"check --heads 2 --alibi-slopes 1,", "--alibi-slopes expects a finite fp32 number, got ''"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    expect_usage_error(args, r, message);
    EXPECT_TRUE(r.out.empty()) << args;
  }
}

// A case past the work or memory limit is refused before anything runs (it once ran for minutes
// at 4 GB, and the OOM killer answered bigger ones); the limits can be raised.
TEST(Cli, ACaseBeyondTheLimitsIsRefusedAtOnce) {
  const Result work = run("check --seqlen-q 134217728 --seqlen-k 134217728 --head-dim 1");
  EXPECT_EQ(work.status, 2) << work.out << work.err;
  EXPECT_NE(work.err.find("the case needs 1.8e+16 multiply-adds (batch*heads*seqlen_q*seqlen_k*head_dim), more than "
                          "--max-work 6.87e+10; raise --max-work to run it"),
            std::string::npos)
      << work.err;
  const Result memory = run("check --seqlen-q 4194304 --seqlen-k 1 --head-dim 256 --max-work 1e18 --max-memory=64");
  EXPECT_EQ(memory.status, 2) << memory.out << memory.err;
  EXPECT_NE(memory.err.find("GiB, more than --max-memory 64 GiB (given); raise --max-memory"), std::string::npos)
      << memory.err;
  EXPECT_EQ(run("check --seqlen-q 4 --seqlen-k 4 --head-dim 4 --max-work 64").status, 0);
  const Result over = run("check --seqlen-q 4 --seqlen-k 4 --head-dim 4 --max-work 63");
  EXPECT_EQ(over.status, 2);
  EXPECT_NE(over.err.find("more than --max-work 63"), std::string::npos) << over.err;
  const std::string file = temp_path("big_case.json");
  ASSERT_EQ(run("check --seqlen-q 64 --seqlen-k 64 --head-dim 8 --save-case " + file).status, 0);
  const Result replay = run("replay " + file + " --max-work 1000");
  EXPECT_EQ(replay.status, 2);
  EXPECT_NE(replay.err.find("more than --max-work 1e+03"), std::string::npos) << replay.err;
  std::remove(file.c_str());
}

TEST(Cli, ReplayOfABadFileIsAOneLineErrorWithStatus2) {
  const std::string file = temp_path("bad_case.json");
  const std::string good = hand_written_case("");
  const std::pair<std::string, std::string> cases[] = {
      {good.substr(0, good.size() - 5), "unexpected end of file (truncated?)"},
      {good + "]", "unexpected characters after the top-level value"},
      {"{\"format\": \"something-else\", \"version\": 1}", "not a flashproof case file"},
      {hand_written_case("", "cauchy"), "unknown distribution \"cauchy\""},
      {hand_written_case("", "normal", "fa9"), "unknown implementation 'fa9'"},
  };
  for (const auto& [text, message] : cases) {
    write_file(file, text);
    const Result r = run("replay " + file);
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_NE(r.err.find(message), std::string::npos) << message << " -> " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  std::remove(file.c_str());
}

// A campaign killed with SIGKILL mid-run and started again with the same command ends with exactly
// the records of an uninterrupted run: none lost, none twice. Only a run that ends by itself leaves
// ended.json (a stale one, as from an earlier run, is removed when a run starts), which is how the
// report tells a killed campaign from a finished one. While the first run is going, a second one on
// the same directory is refused (it would append the same records, and the first to end would
// remove the other's working files, whose cases then counted as crashes).
std::vector<std::string> campaign_lines(const std::filesystem::path& dir) {
  std::vector<std::string> keys;
  std::ifstream in(dir / "cases.jsonl");
  for (std::string line; std::getline(in, line);) {
    // index, case seed and verdict: the record without its timings
    const auto field = [&](const std::string& key) {
      const std::size_t at = line.find("\"" + key + "\": ");
      return at == std::string::npos ? std::string() : line.substr(at, line.find_first_of(",}", at) - at);
    };
    keys.push_back(field("index") + " " + field("seed") + " " + field("status"));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(Cli, FuzzKilledAndResumedLosesNoCase) {
  namespace fs = std::filesystem;
  const fs::path killed = fs::path(testing::TempDir()) / ("fp_killed_" + std::to_string(getpid()));
  const fs::path whole = fs::path(testing::TempDir()) / ("fp_whole_" + std::to_string(getpid()));
  fs::remove_all(killed);
  fs::remove_all(whole);
  const std::string args = "fuzz --impl naive --seed 9 --cases 80 --max-seqlen 64 --max-work 100000 --out ";
  fs::create_directories(killed);
  std::ofstream(killed / "ended.json") << "{\"format\": \"flashproof-campaign-end\"}\n";  // stale
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string out = killed.string();
    execl(FLASHPROOF_BIN, FLASHPROOF_BIN, "fuzz", "--impl", "naive", "--seed", "9", "--cases", "80", "--max-seqlen",
          "64", "--max-work", "100000", "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once some records are in, mid-campaign.
  for (int waited = 0; waited < 3000; ++waited) {
    if (campaign_lines(killed).size() >= 10) break;
    usleep(10000);
  }
  const Result second = run(args + killed.string());
  EXPECT_EQ(second.status, 2) << second.out << second.err;
  EXPECT_NE(second.err.find(killed.string() + " is in use by another flashproof fuzz run (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << second.err;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the campaign finished before it could be killed";
  const std::size_t before = campaign_lines(killed).size();
  EXPECT_GE(before, 10u);
  EXPECT_LT(before, 80u);
  EXPECT_FALSE(fs::exists(killed / "ended.json"));
  const Result resumed = run(args + killed.string());
  EXPECT_NE(resumed.status, 2) << resumed.err;  // 1 when a case failed (docs/fuzz.md, Findings)
  EXPECT_NE(resumed.out.find("from earlier runs"), std::string::npos);
  EXPECT_TRUE(fs::exists(killed / "ended.json"));
  const Result uninterrupted = run(args + whole.string());
  EXPECT_EQ(uninterrupted.status, resumed.status) << uninterrupted.err;
  const std::vector<std::string> a = campaign_lines(killed), b = campaign_lines(whole);
  EXPECT_EQ(a.size(), 80u);
  EXPECT_EQ(a, b);
  fs::remove_all(killed);
  fs::remove_all(whole);
}

// --profile and --sample (docs/fuzz.md, Production profile): bad values, and the limits the
// production profile does not take, in either order, are one line with exit status 2.
TEST(Cli, ProfileAndSampleBadInputIsOneLineWithStatus2) {
  // --impl naive: were a check missing, the case would run in seconds, not for an hour.
  const std::string out = " --out " + testing::TempDir() + "fp_profile_" + std::to_string(getpid());
  const char* cases[][2] = {
      {"fuzz --seed 1 --cases 1 --profile fast", "--profile expects default, production, packed, score-mod or decode, got 'fast'"},
      {"fuzz --seed 1 --cases 1 --profile", "--profile needs a value"},
      {"fuzz --seed 1 --cases 1 --profile=", "--profile expects default, production, packed, score-mod or decode, got ''"},
      {"fuzz --seed 1 --cases 1 --sample -1", "--sample must be >= 0 (0: every element), got -1"},
      {"fuzz --seed 1 --cases 1 --sample 1.5", "--sample expects a number, got '1.5'"},
      {"fuzz --seed 1 --cases 1 --sample 64x", "--sample expects a number, got '64x'"},
      {"fuzz --seed 1 --cases 1 --sample", "--sample needs a value"},
      {"fuzz --seed 1 --cases 1 --sample 99999999999999999999", "--sample is out of range"},
      {"fuzz --seed 1 --cases 1 --profile production --max-seqlen 64",
       "--max-seqlen does not apply to --profile production"},
      {"fuzz --seed 1 --cases 1 --max-seqlen 64 --profile production",
       "--max-seqlen does not apply to --profile production"},
      {"fuzz --seed 1 --cases 1 --profile production --max-work 4096", "--max-work does not apply to --profile production"},
      {"export --seed 1 --cases 1 --profile production --max-seqlen 64",
       "--max-seqlen does not apply to --profile production"},
      {"export --seed 1 --cases 1 --profile huge", "--profile expects default, production, packed, score-mod or decode, got 'huge'"},
      {"export --seed 1 --cases 1 --sample 4", "unknown option '--sample' for export"},
  };
  for (const auto& [args, message] : cases) {
    std::string command = args;
    // Right after the verb: the last option may lack its value.
    command.insert(command.find(' '), out + (command.starts_with("fuzz") ? " --impl naive" : ""));
    const Result r = run(command);
    expect_usage_error(args, r, message);
    EXPECT_TRUE(r.out.empty()) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(testing::TempDir() + "fp_profile_" + std::to_string(getpid())));
}

// --profile default and --sample 0 are the defaults: the campaign.json of a campaign given them is
// the one of a campaign given neither, so either resumes the other's directory.
TEST(Cli, DefaultProfileAndSampleLeaveTheCampaignAsItWas) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / ("fp_default_profile_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string args = "fuzz --impl naive --seed 4 --cases 3 --max-seqlen 16 --max-work 4096 --out " + dir.string();
  const Result plain = run(args);
  ASSERT_NE(plain.status, 2) << plain.err;
  const auto parameters = [&] {
    std::ifstream in(dir / "campaign.json");
    for (std::string line; std::getline(in, line);)
      if (line.find("\"parameters\"") != std::string::npos) return line;
    return std::string();
  };
  const std::string before = parameters();
  EXPECT_EQ(before.find("profile"), std::string::npos) << before;
  EXPECT_EQ(before.find("sample"), std::string::npos) << before;
  const Result again = run(args + " --profile default --sample 0");
  EXPECT_EQ(again.status, plain.status) << again.err;
  EXPECT_NE(again.out.find("0 records this run, 3 from earlier runs"), std::string::npos) << again.out;
  EXPECT_EQ(parameters(), before);
  const Result production = run("fuzz --impl naive --seed 4 --cases 3 --profile production --out " + dir.string());
  EXPECT_EQ(production.status, 2);  // another campaign's directory
  EXPECT_NE(production.err.find("holds another campaign's results"), std::string::npos) << production.err;
  fs::remove_all(dir);
}

}  // namespace
