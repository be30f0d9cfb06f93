// The command line's contract, checked against the options CLI11 holds (so that an option added
// later is covered without touching this file): every verb's --help exits 0 and names and
// describes each of its options; every option takes --opt=value as well as --opt value; a bad
// option, a flag given a value or a value missing at the end is one line with exit status 2.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "cli/command_line.h"
#include "cli/option_values.h"

namespace flashproof::cli {
namespace {

struct Result {
  int status;
  std::string out, err;
};

// The flashproof binary with `args` (each one word, no shell quoting needed).
Result run(const std::vector<std::string>& args) {
  static int calls = 0;
  const std::string err_file = testing::TempDir() + "flashproof_cmdline_stderr_" + std::to_string(getpid()) + "_" +
                               std::to_string(++calls) + ".txt";
  std::string cmd = FLASHPROOF_BIN;
  for (const std::string& a : args) cmd += " '" + a + "'";
  Result r{};
  FILE* p = popen((cmd + " 2>" + err_file).c_str(), "r");
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

bool one_line(const std::string& text) { return !text.empty() && text.find('\n') == text.size() - 1; }

// Each verb's subcommand, as the App holds it.
std::vector<const CLI::App*> verbs(const CommandLine& line) {
  std::vector<const CLI::App*> out;
  for (const char* name : kVerbs) out.push_back(line.app().get_subcommand(name));
  return out;
}

// A good value of each option that takes one, and what else its verb needs to parse. A new option
// without an entry here fails ValueOptionsTakeBothSpellings, which is the point.
const std::map<std::string, std::string>& good_values() {
  static const std::map<std::string, std::string> values = {
      {"--impl", "naive"}, {"--dtype", "bf16"}, {"--batch", "2"}, {"--heads", "4"}, {"--kv-heads", "2"},
      {"--seqlen-q", "9"}, {"--seqlen-k", "17"}, {"--head-dim", "40"}, {"--window", "3,2"}, {"--scale", "0.5"},
      {"--dist", "scaled:3"}, {"--seed", "7"}, {"--schedule", "5"}, {"--reference", "mpfr"}, {"--precision", "150"},
      {"--sample", "4"}, {"--threads", "2"}, {"--save-case", "case.json"}, {"--max-work", "1000000000"},
      {"--max-memory", "8"}, {"--smt2", "smt2-dir"}, {"--timeout", "5"}, {"--out", "out-dir"},
      {"--backward", "yes"}, {"--max-seqlen", "64"}, {"--profile", "default"}, {"--cases", "3"},
      {"--minutes", "2"}, {"--shard", "1/2"}, {"--shard-count", "2"}, {"--jobs", "2"}, {"--case-timeout", "60"},
      {"--masks", "none"}, {"--support", "support.json"}, {"--cu-seqlens-q", "0,3,10"}, {"--cu-seqlens-k", "0,5,12"},
      {"--softcap", "30"}, {"--alibi-slopes", "standard"}, {"--cache-seqlens", "5"}, {"--page-size", "16"},
      {"--num-pages", "8"}, {"--block-table", "shuffled:3"}, {"--num-splits", "2"}, {"--seqlen-new", "1"}};
  return values;
}

// What a verb needs besides the option under test, so that the parse gets through (check: --heads
// that --kv-heads divides).
std::vector<std::string> required_of(const std::string& verb) {
  if (verb == "check") return {"--heads", "4"};
  if (verb == "replay") return {"case.json"};
  if (verb == "fuzz") return {"--seed", "1", "--cases", "1", "--out", "campaign"};
  if (verb == "export") return {"--seed", "1", "--cases", "1", "--out", "exported"};
  if (verb == "report") return {"campaign", "--out", "report-dir"};
  return {};
}

// required_of(verb) without `option` and its value.
std::vector<std::string> required_besides(const std::string& verb, const std::string& option) {
  std::vector<std::string> args = required_of(verb);
  // A packed batch's offsets come in pairs (Problem::validate): each needs the other.
  if (option == "--cu-seqlens-q") args.insert(args.end(), {"--cu-seqlens-k", "0,5,12"});
  if (option == "--cu-seqlens-k") args.insert(args.end(), {"--cu-seqlens-q", "0,3,10"});
  // A page pool and its table need pages; a split count needs a KV cache.
  if (option == "--num-pages" || option == "--block-table") args.insert(args.end(), {"--page-size", "16"});
  if (option == "--num-splits" || option == "--seqlen-new") args.insert(args.end(), {"--cache-seqlens", "5"});
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == option) args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
  return args;
}

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(CommandLine, EveryVerbIsASubcommand) {
  const CommandLine line;
  for (const char* name : kVerbs) EXPECT_NE(line.app().get_subcommand(name), nullptr) << name;
  EXPECT_EQ(line.app().get_subcommands({}).size(), std::size(kVerbs));
}

// --help of every verb (and the top level): exit 0, on stdout, naming and describing every option
// the App holds for it.
TEST(CommandLine, EveryVerbsHelpDescribesEveryOption) {
  const CommandLine line;
  const Result top = run({"--help"});
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_EQ(top.err, "");
  for (const CLI::App* verb : verbs(line)) {
    EXPECT_NE(top.out.find(verb->get_name()), std::string::npos) << verb->get_name();
    EXPECT_NE(top.out.find(verb->get_description()), std::string::npos) << verb->get_name();
    EXPECT_FALSE(verb->get_description().empty()) << verb->get_name();
    for (const char* spelling : {"--help", "-h"}) {
      const Result help = run({verb->get_name(), spelling});
      EXPECT_EQ(help.status, 0) << verb->get_name() << " " << spelling << ": " << help.err;
      EXPECT_EQ(help.err, "") << verb->get_name();
      EXPECT_EQ(help.out.rfind("usage: flashproof " + verb->get_name(), 0), 0u) << help.out;
      const std::vector<const CLI::Option*> options = verb->get_options();
      EXPECT_GE(options.size(), 1u);
      for (const CLI::Option* option : options) {
        const std::string name = option->get_name();
        EXPECT_FALSE(option->get_description().empty()) << verb->get_name() << " " << name << " has no description";
        EXPECT_NE(help.out.find(name), std::string::npos) << verb->get_name() << " --help does not name " << name;
        EXPECT_NE(help.out.find(option->get_description()), std::string::npos)
            << verb->get_name() << " --help does not describe " << name;
      }
    }
  }
}

// Every option that takes a value reaches its verb with either spelling, and the value is the one
// given.
TEST(CommandLine, ValueOptionsTakeBothSpellings) {
  const CommandLine names;
  for (const CLI::App* verb_app : verbs(names)) {
    const std::string verb = verb_app->get_name();
    for (const CLI::Option* option : verb_app->get_options()) {
      if (option->get_items_expected_max() == 0 || option->get_positional()) continue;  // flags, positionals
      const std::string name = option->get_name();
      ASSERT_TRUE(good_values().count(name)) << verb << " " << name << ": add a good value to good_values()";
      const std::string value = good_values().at(name);
      for (const std::vector<std::string>& spelling :
           {std::vector<std::string>{name + "=" + value}, std::vector<std::string>{name, value}}) {
        CommandLine line;
        const std::vector<std::string> args = concat(concat({verb}, required_besides(verb, name)), spelling);
        EXPECT_NO_THROW(line.parse(args)) << verb << " " << spelling[0];
        const CLI::Option* parsed = line.app().get_subcommand(verb)->get_option(name);
        EXPECT_EQ(parsed->results(), std::vector<std::string>{value}) << verb << " " << spelling[0];
      }
    }
  }
}

// Through the binary: --opt=value for a verb that runs at once and prints what it was given.
TEST(CommandLine, OptEqualsValueEndToEnd) {
  const Result both = run({"check", "--json", "--seqlen-q=5", "--seqlen-k", "3", "--head-dim=8", "--dist=scaled:2"});
  EXPECT_EQ(both.status, 0) << both.err;
  EXPECT_NE(both.out.find("\"seqlen_q\": 5, \"seqlen_k\": 3, \"head_dim\": 8"), std::string::npos) << both.out;
  EXPECT_NE(both.out.find("\"distribution\": \"scaled:2\""), std::string::npos) << both.out;
  const Result prove = run({"prove", "--timeout=5", "--list", "merge_states"});
  EXPECT_EQ(prove.status, 0) << prove.err;
  EXPECT_EQ(prove.out.rfind("merge_states\t", 0), 0u) << prove.out;
}

// Every option spelled wrongly in each of the ways CLI11 might word in several lines: the error is
// one line, through the binary with exit status 2 and nothing on stdout.
TEST(CommandLine, BadOptionsAreOneLineWithStatus2) {
  const CommandLine line;
  std::vector<std::vector<std::string>> cases;
  for (const CLI::App* verb_app : verbs(line)) {
    const std::string verb = verb_app->get_name();
    cases.push_back(concat(concat({verb}, required_of(verb)), {"--no-such-option"}));
    cases.push_back(concat(concat({verb}, required_of(verb)), {"-x"}));
    for (const CLI::Option* option : verb_app->get_options()) {
      if (option->get_positional() || option == verb_app->get_help_ptr()) continue;
      const std::string name = option->get_name();
      if (option->get_items_expected_max() == 0) cases.push_back(concat({verb, name + "=yes"}, required_of(verb)));
      else cases.push_back(concat(concat({verb}, required_besides(verb, name)), {name}));  // the value missing
    }
  }
  ASSERT_GT(cases.size(), 40u);
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    try {
      CommandLine parser;
      parser.parse(args);
      ADD_FAILURE() << shown << "parsed";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << shown << e.what();
    }
  }
  // The binary, for one of each kind per verb (each run is a process).
  for (const CLI::App* verb_app : verbs(line)) {
    const std::string verb = verb_app->get_name();
    for (const std::vector<std::string>& args :
         {concat(concat({verb}, required_of(verb)), {"--no-such-option"}), concat({verb, "--help=1"}, required_of(verb))}) {
      const Result r = run(args);
      EXPECT_EQ(r.status, 2) << verb << " " << args.back();
      EXPECT_TRUE(one_line(r.err)) << verb << ": not one line: " << r.err;
      EXPECT_EQ(r.out, "") << verb;
    }
  }
}

}  // namespace
}  // namespace flashproof::cli
