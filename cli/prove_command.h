// `flashproof prove [NAME...]`: every proof (or the named ones) and its twin (docs/proofs.md).
#pragma once

#include <string>
#include <vector>

#include "cli/app_fwd.h"

#include "proofs/proof.h"

namespace flashproof::cli {

struct ProveCommand {
  std::vector<std::string> names;  // empty: every proof
  proofs::RunOptions options;
  bool list = false, verbose = false;
};

void add_prove_options(CLI::App& verb, ProveCommand& into);
// After parsing: an unknown option throws UsageError.
void finish_prove_options(const CLI::App& verb);

// An unknown proof name throws UsageError before any proof runs. Exit status 0 only when every proof is proved and every twin yields a counterexample.
int run_prove_command(const ProveCommand& command);

}  // namespace flashproof::cli
