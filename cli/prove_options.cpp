// prove's command line (cli/prove_command.h).
#include "cli/prove_command.h"

#include "cli/option_syntax.h"
#include "cli/option_values.h"
#include "cli/value_option.h"

namespace flashproof::cli {

void add_prove_options(CLI::App& verb, ProveCommand& into) {
  verb.add_option("NAME", into.names, "the proofs to run (default: every one; see --list)")->type_name("");
  verb.add_flag("--list", into.list, "print the proofs' names and statements instead of running them");
  verb.add_flag("--verbose", into.verbose, "describe every obligation, not only those that did not come out as expected");
  add_value_option(verb, "--smt2", "DIR", "write every query to DIR as SMT-LIB (created if missing)",
                   [&into](const std::string&, const std::string& v) {
                     if (v.empty()) throw UsageError("--smt2 needs a directory");
                     into.options.smt2_dir = v;
                   });
  add_value_option(verb, "--timeout", "SECONDS", "the solver's limit per obligation (1 .. 3600; default 20)",
                   [&into](const std::string& n, const std::string& v) {
                     const auto seconds = parse_count(n, v);
                     if (seconds > 3600) throw UsageError("--timeout must be at most 3600 seconds, got " + v);
                     into.options.timeout_ms = static_cast<unsigned>(seconds * 1000);
                   });
}

void finish_prove_options(const CLI::App& verb) {
  for (const std::string& extra : unexpected_arguments(verb))
    throw UsageError("unknown option '" + extra + "' for prove");
}

}  // namespace flashproof::cli
