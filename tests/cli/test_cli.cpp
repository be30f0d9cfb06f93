// The flashproof command end to end: good cases, JSON, and one-line errors with exit status 2.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <vector>
#include <string>
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
      {"check --precision 8", "reference precision (8 bits) must be between 64 and 65536"},
      {"prove no_such_proof", "no proof named 'no_such_proof'"},
      {"prove --timeout 0", "--timeout must be >= 1"},
      {"prove --smt2 /proc/flashproof", "--smt2: cannot create directory"},
      {"prove --frobnicate", "unknown option '--frobnicate' for prove"},
      {"frobnicate", "unknown command 'frobnicate'"},
      {"", "missing command"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << " -> " << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": not one line: " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
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

}  // namespace
