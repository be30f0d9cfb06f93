// The flashproof command (SPEC.md "The command line"). Bad input of any kind gets a one-line
// error on stderr and exit status 2; a failed check exits 1.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <filesystem>

#include "cli/args.h"
#include "cli/case_limits.h"
#include "cli/export_command.h"
#include "cli/fuzz_command.h"
#include "report/report_command.h"
#include "harness/case_file.h"
#include "harness/check.h"
#include "harness/imported_attention.h"
#include "proofs/proof.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"
#include "properties/properties.h"

namespace flashproof {
namespace {

using cli::Arg;
using cli::Args;
using cli::parse_count;
using cli::parse_float;
using cli::parse_number;
using cli::UsageError;

constexpr const char* kUsage =
    "usage: flashproof list\n"
    "       flashproof check [--impl NAME] [--dtype fp16|bf16|fp32] [--batch N] [--heads N]\n"
    "                        [--kv-heads N] [--seqlen-q N] [--seqlen-k N] [--head-dim N]\n"
    "                        [--causal] [--window L,R] [--scale S] [--dist NAME[:P]] [--seed S]\n"
    "                        [--schedule SEED] [--backward] [--json] [--reference fast|mpfr|cpp_bin_float]\n"
    "                        [--precision BITS] [--sample N] [--threads N] [--save-case FILE]\n"
    "                        [--max-work W] [--max-memory GIB]\n"
    "       flashproof replay FILE [--json] [--threads N] [--max-work W] [--max-memory GIB]\n"
    "       flashproof prove [NAME...] [--list] [--smt2 DIR] [--timeout SECONDS] [--verbose]\n"
    "       flashproof fuzz [--impl all|I[,I...]] [--dtype D[,D...]] (--cases N | --minutes M) --seed S\n"
    "                       [--shard i/n] [--shard-count n] [--backward yes|no|both] [--max-seqlen L]\n"
    "                       [--max-work W] [--jobs J] [--case-timeout SECONDS] [--no-shrink]\n"
    "                       [--profile default|production] [--sample N] --out DIR\n"
    "       flashproof report DIR... --out DIR\n"
    "       flashproof export --seed S --cases N [--dtype D[,D...]] [--backward yes|no|both]\n"
    "                         [--max-seqlen L] [--max-work W] [--profile default|production]\n"
    "                         [--masks none|causal-square|any] --out DIR\n"
    "fuzz, export: --profile production draws the sizes of real models (sequences to 131072, index\n"
    "              and grid limits; docs/fuzz.md); --max-seqlen and --max-work apply to the default\n"
    "              profile only. fuzz --sample N: judge N random rows and columns per check beside\n"
    "              the structured ones (0: every element; default 0, production 64)\n"
    "environment: FLASHPROOF_IMPORT=DIR registers imported:<backend> for the outputs under an\n"
    "             exported DIR (docs/exchange.md) before any command runs\n";

// The record as a table or JSON; exit status 1 for a failed check, 0 for pass or out-of-domain.
int report(const CheckRecord& r, bool json) {
  std::cout << (json ? to_json(r) : to_table(r));
  return r.verdict == Verdict::fail ? 1 : 0;
}

int run_list() {
  for (AttentionImpl* impl : implementations())
    std::cout << impl->name() << "\t" << impl->where() << "\t" << impl->description() << "\n";
  return 0;
}

int run_check_command(Args a) {
  Case c;
  c.problem.seqlen_q = 128;
  c.problem.seqlen_k = 128;
  c.problem.head_dim = 64;
  CheckOptions opt;
  bool json = false, causal = false, kv_heads_given = false;
  std::optional<std::pair<std::int64_t, std::int64_t>> window;
  std::string save_case;
  cli::CaseLimits limits;
  while (!a.done()) {
    Arg item(a);
    const std::string_view arg = item.name;
    auto flag = [&] { item.flag(); };
    auto next = [&] { return item.next(); };
    if (arg == "--max-work" || arg == "--max-memory") {
      cli::parse_case_limit(arg, next(), limits);
    } else if (arg == "--impl") {
      c.impl = std::string(next());
    } else if (arg == "--dtype") {
      const std::string_view v = next();
      const auto t = parse_dtype(v);
      if (!t) throw UsageError("unsupported dtype '" + std::string(v) + "' (fp16, bf16, fp32)");
      c.problem.dtype = *t;
    } else if (arg == "--batch") {
      c.problem.batch = parse_count(arg, next());
    } else if (arg == "--heads") {
      c.problem.heads_q = parse_count(arg, next());
    } else if (arg == "--kv-heads") {
      c.problem.heads_kv = parse_count(arg, next());
      kv_heads_given = true;
    } else if (arg == "--seqlen-q") {
      c.problem.seqlen_q = parse_count(arg, next());
    } else if (arg == "--seqlen-k") {
      c.problem.seqlen_k = parse_count(arg, next());
    } else if (arg == "--head-dim") {
      c.problem.head_dim = parse_count(arg, next());
    } else if (arg == "--causal") {
      flag();
      causal = true;
    } else if (arg == "--window") {
      const std::string_view v = next();
      const auto comma = v.find(',');
      if (comma == std::string_view::npos)
        throw UsageError("--window expects L,R (a negative side is unbounded), got '" +
                         std::string(v) + "'");
      auto side = [&](std::string_view s) {
        const auto x = parse_number<std::int64_t>("--window", s);
        return x < 0 ? std::int64_t{-1} : x;
      };
      window = {side(v.substr(0, comma)), side(v.substr(comma + 1))};
    } else if (arg == "--scale") {
      c.problem.scale = parse_float(arg, next());
    } else if (arg == "--dist") {
      const std::string_view v = next();
      const auto d = parse_distribution(v);
      if (!d) {
        std::string names;
        for (const auto& n : distribution_names()) names += (names.empty() ? "" : ", ") + n;
        throw UsageError("unknown distribution '" + std::string(v) + "' (" + names + ")");
      }
      c.dist = *d;
    } else if (arg == "--seed") {
      c.seed = parse_number<std::uint64_t>(arg, next());
    } else if (arg == "--schedule") {
      c.schedule = parse_number<std::uint64_t>(arg, next());
    } else if (arg == "--backward") {
      flag();
      c.backward = true;
    } else if (arg == "--json") {
      flag();
      json = true;
    } else if (arg == "--reference") {
      const std::string_view v = next();
      if (v == "fast") opt.reference.backend = reference::Backend::fast;
      else if (v == "mpfr") opt.reference.backend = reference::Backend::mpfr;
      else if (v == "cpp_bin_float") opt.reference.backend = reference::Backend::cpp_bin_float;
      else throw UsageError("unknown reference backend '" + std::string(v) + "' (fast, mpfr, cpp_bin_float)");
    } else if (arg == "--precision") {
      opt.reference.precision_bits = static_cast<unsigned>(parse_count(arg, next(), cli::kMaxPrecisionBits));
    } else if (arg == "--sample") {
      opt.reference.sample = parse_count(arg, next());
    } else if (arg == "--threads") {
      opt.reference.threads = static_cast<int>(parse_count(arg, next(), cli::kMaxThreads));
    } else if (arg == "--save-case") {
      save_case = std::string(next());
      if (save_case.empty()) throw UsageError("--save-case needs a file name");
    } else {
      throw UsageError("unknown option '" + std::string(arg) + "'");
    }
  }
  if (!kv_heads_given) c.problem.heads_kv = c.problem.heads_q;
  if (window) {
    c.problem.window_left = window->first;
    c.problem.window_right = window->second;
  }
  if (causal) {
    if (window && window->second != 0)
      throw UsageError("--causal means a right window side of 0, but --window gives " +
                       std::to_string(window->second));
    c.problem.window_right = 0;
  }
  if (const std::string e = c.problem.validate(); !e.empty()) throw UsageError(e);
  cli::check_case_limits(c.problem, c.backward, limits, opt.reference.sample);
  // Saved before the run, so a case whose implementation crashes is kept as well.
  if (!save_case.empty()) write_case_file(save_case, c, opt);
  return report(run_check(c, opt), json);
}

// A case file saved by a failing property: the property again on the same case. Exit 0 when it
// holds now, 1 when it fails.
int replay_property(const CaseFile& cf, AttentionImpl& impl, bool json) {
  const properties::Property* property = properties::find_property(cf.property);
  if (!property) throw UsageError("unknown property '" + cf.property + "' in the case file");
  if (const std::string e = impl.unsupported_reason(cf.c.problem, cf.c.backward); !e.empty())
    throw UsageError(impl.name() + " does not support this case: " + e);
  const properties::Outcome o = property->check(impl, cf.c);
  if (json) {
    std::cout << "{\"property\": " << json_quote(cf.property) << ", \"impl\": " << json_quote(impl.name())
              << ", \"holds\": " << (o.holds ? "true" : "false") << ", \"why\": " << json_quote(o.why) << "}\n";
  } else {
    std::cout << "property: " << cf.property << " (" << property->what << ")\n"
              << "implementation: " << impl.name() << " (" << impl.where() << ")\n"
              << "verdict: " << (o.holds ? "holds" : "fails: " + o.why) << "\n";
  }
  return o.holds ? 0 : 1;
}

// flashproof replay FILE: the saved case with its saved check options (docs/case-files.md).
int run_replay_command(Args a) {
  std::optional<std::string> file;
  bool json = false;
  int threads = 0;
  cli::CaseLimits limits;
  while (!a.done()) {
    Arg item(a);
    if (item.name == "--max-work" || item.name == "--max-memory") {
      cli::parse_case_limit(item.name, item.next(), limits);
    } else if (item.name == "--json") {
      item.flag();
      json = true;
    } else if (item.name == "--threads") {
      threads = static_cast<int>(parse_count(item.name, item.next(), cli::kMaxThreads));
    } else if (item.name.starts_with("-")) {
      throw UsageError("unknown option '" + std::string(item.name) + "' for replay");
    } else if (file) {
      throw UsageError("replay takes one case file, got '" + *file + "' and '" +
                       std::string(item.name) + "'");
    } else {
      file = std::string(item.name);
    }
  }
  if (!file) throw UsageError("replay needs a case file (flashproof replay FILE [--json])");
  CaseFile cf = read_case_file(*file);
  cf.options.reference.threads = threads;
  cli::check_case_limits(cf.c.problem, cf.c.backward, limits, cf.options.reference.sample);
  // The deliberately flawed baselines of the property suite are not registered; their failures'
  // case files name them.
  std::unique_ptr<AttentionImpl> flawed = make_flawed_naive(cf.c.impl);
  AttentionImpl* impl = flawed ? flawed.get() : find_implementation(cf.c.impl);
  if (!impl) throw UsageError("case file " + *file + ": unknown implementation '" + cf.c.impl + "' (see `flashproof list`)");
  if (!json) {
    std::cout << "case file: " << printable(*file) << "\n";
    if (!cf.note.empty()) std::cout << "note: " << printable(cf.note) << "\n";
  }
  if (!cf.property.empty()) return replay_property(cf, *impl, json);
  return report(run_check(cf.c, *impl, cf.options), json);
}

// flashproof prove: every proof (or the named ones) and its twin. Exit 0 only when every proof is
// proved and every twin yields a counterexample.
int run_prove_command(Args a) {
  std::vector<std::string> names;
  proofs::RunOptions options;
  bool list = false, verbose = false;
  while (!a.done()) {
    Arg item(a);
    const std::string arg(item.name);
    auto next = [&] { return std::string(item.next()); };
    if (arg == "--list") {
      item.flag();
      list = true;
    } else if (arg == "--verbose") {
      item.flag();
      verbose = true;
    } else if (arg == "--smt2") {
      options.smt2_dir = next();
      std::error_code ec;
      std::filesystem::create_directories(options.smt2_dir, ec);
      if (ec || !std::filesystem::is_directory(options.smt2_dir))
        throw UsageError("--smt2: cannot create directory '" + options.smt2_dir + "'");
    } else if (arg == "--timeout") {
      const std::string v = next();
      const auto seconds = parse_count("--timeout", v);
      if (seconds > 3600) throw UsageError("--timeout must be at most 3600 seconds, got " + v);
      options.timeout_ms = static_cast<unsigned>(seconds * 1000);
    } else if (arg.starts_with("-")) {
      throw UsageError("unknown option '" + arg + "' for prove");
    } else {
      names.push_back(arg);
    }
  }
  std::vector<const proofs::ProofSpec*> selected;
  for (const auto& name : names) {
    const proofs::ProofSpec* found = nullptr;
    for (const auto& p : proofs::all_proofs()) found = p.name == name ? &p : found;
    if (!found) throw UsageError("no proof named '" + name + "' (flashproof prove --list)");
    selected.push_back(found);
  }
  if (names.empty()) {
    for (const auto& p : proofs::all_proofs()) selected.push_back(&p);
  }
  if (list) {
    for (const auto* p : selected) std::cout << p->name << "\t" << p->statement << "\n";
    return 0;
  }
  int failures = 0;
  double total = 0;
  for (const auto* p : selected) {
    const auto shipped = proofs::run_proof(*p, proofs::Variant::shipped, options);
    const auto twin = proofs::run_proof(*p, proofs::Variant::twin, options);
    const bool pass = proofs::proof_passes(shipped, twin);
    failures += pass ? 0 : 1;
    total += shipped.seconds + twin.seconds;
    std::printf("%-14s %-24s %6.2f s   twin (%s): %s %.2f s\n", proofs::to_string(shipped.outcome),
                p->name.c_str(), shipped.seconds, p->twin.c_str(), proofs::to_string(twin.outcome),
                twin.seconds);
    if (verbose || shipped.outcome != proofs::Outcome::proved) std::cout << proofs::describe(shipped);
    if (verbose || twin.outcome != proofs::Outcome::counterexample) std::cout << proofs::describe(twin);
  }
  std::printf("%zu proofs, %d failed, %.2f s%s%s\n", selected.size(), failures, total,
              options.smt2_dir.empty() ? "" : "; SMT-LIB queries in ", options.smt2_dir.c_str());
  return failures == 0 ? 0 : 1;
}

int main_impl(int argc, char** argv) {
  if (argc < 2) throw UsageError("missing command (list, check, prove, replay, fuzz, report, export)");
  const std::string_view cmd = argv[1];
  if (const char* root = std::getenv("FLASHPROOF_IMPORT"); root != nullptr && *root != '\0') {
    try {
      register_imported_implementations(root);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("FLASHPROOF_IMPORT: ") + e.what());
    }
  }
  Args rest;
  for (int i = 2; i < argc; ++i) rest.items.emplace_back(argv[i]);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "list") {
    if (!rest.done()) throw UsageError("list takes no arguments");
    return run_list();
  }
  if (cmd == "check") return run_check_command(rest);
  if (cmd == "prove") return run_prove_command(rest);
  if (cmd == "replay") return run_replay_command(rest);
  if (cmd == "fuzz") return cli::run_fuzz_command(rest);
  if (cmd == "export") return cli::run_export_command(rest);
  if (cmd == "report") return report::report_command(std::vector<std::string>(argv + 2, argv + argc), std::cout, std::cerr);
  throw UsageError("unknown command '" + std::string(cmd) + "' (list, check, prove, replay, fuzz, report, export)");
}

}  // namespace
}  // namespace flashproof

namespace {

// Every error goes out as one printable line (printable: no line break or control character from
// a file name, a file's content or an option's value reaches the terminal).
int error_line(const std::string& message, int status) {
  std::cerr << "flashproof: " << flashproof::printable(message) << "\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return flashproof::main_impl(argc, argv);
  } catch (const flashproof::cli::UsageError& e) {
    return error_line(e.what(), 2);
  } catch (const std::invalid_argument& e) {
    return error_line(e.what(), 2);
  } catch (const std::bad_alloc&) {
    return error_line("out of memory for this case", 2);
  } catch (const std::exception& e) {
    return error_line(std::string("internal error: ") + e.what(), 3);
  }
}
