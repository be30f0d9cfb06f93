// replay's command line (cli/replay_command.h).
#include "cli/replay_command.h"

#include "cli/option_syntax.h"
#include "cli/option_values.h"
#include "cli/value_option.h"

namespace flashproof::cli {

void add_replay_options(CLI::App& verb, ReplayCommand& into) {
  verb.add_option("FILE", into.file, "the case file (written by check --save-case, a fuzz failure or a property)")
      ->type_name("");
  verb.add_flag("--json", into.json, "print the record as JSON instead of a table");
  verb.add_flag("--require-judged", into.require_judged,
                "exit status 4 when the verdict is not-judged (no rigorous bound judged some tensor) instead of 0");
  add_value_option(verb, "--threads", "N", "host threads of the reference (default: every hardware thread)",
                   [&into](const std::string& n, const std::string& v) {
                     into.threads = static_cast<int>(parse_count(n, v, kMaxThreads));
                   });
  add_case_limit_options(verb, into.limits);
}

void finish_replay_options(const CLI::App& verb, const ReplayCommand& command) {
  for (const std::string& extra : unexpected_arguments(verb)) {
    if (extra.starts_with("-")) throw UsageError("unknown option '" + extra + "' for replay");
    throw UsageError("replay takes one case file, got '" + command.file + "' and '" + extra + "'");
  }
  if (verb.get_option("FILE")->count() == 0)
    throw UsageError("replay needs a case file (flashproof replay FILE [--json])");
}

}  // namespace flashproof::cli
