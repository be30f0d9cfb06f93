#include "cli/prove_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/option_values.h"

namespace flashproof::cli {
namespace {

// The named proofs, or every one.
std::vector<const proofs::ProofSpec*> selected_proofs(const std::vector<std::string>& names) {
  std::vector<const proofs::ProofSpec*> selected;
  for (const auto& name : names) {
    const proofs::ProofSpec* found = nullptr;
    for (const auto& p : proofs::all_proofs()) found = p.name == name ? &p : found;
    if (!found) throw UsageError("no proof named '" + name + "' (flashproof prove --list)");
    selected.push_back(found);
  }
  if (names.empty())
    for (const auto& p : proofs::all_proofs()) selected.push_back(&p);
  return selected;
}

}  // namespace

int run_prove_command(const ProveCommand& command) {
  const std::vector<const proofs::ProofSpec*> selected = selected_proofs(command.names);
  if (command.list) {
    for (const auto* p : selected) std::cout << p->name << "\t" << p->statement << "\n";
    return 0;
  }
  const proofs::RunOptions& options = command.options;
  if (!options.smt2_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.smt2_dir, ec);
    if (ec || !std::filesystem::is_directory(options.smt2_dir))
      throw UsageError("--smt2: cannot create directory '" + options.smt2_dir + "'");
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
    if (command.verbose || shipped.outcome != proofs::Outcome::proved) std::cout << proofs::describe(shipped);
    if (command.verbose || twin.outcome != proofs::Outcome::counterexample) std::cout << proofs::describe(twin);
  }
  std::printf("%zu proofs, %d failed, %.2f s%s%s\n", selected.size(), failures, total,
              options.smt2_dir.empty() ? "" : "; SMT-LIB queries in ", options.smt2_dir.c_str());
  return failures == 0 ? 0 : 1;
}

}  // namespace flashproof::cli
