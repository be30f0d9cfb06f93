// flashproof's command line: one CLI11 App with a subcommand per verb. Parsing turns the
// arguments into the verb and its options without running anything, reading no file and creating
// no directory (main.cpp runs it; tests/parsers/fuzz_cli.cpp fuzzes it).
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "cli/check_command.h"
#include "cli/export_options.h"
#include "cli/fuzz_command.h"
#include "cli/prove_command.h"
#include "cli/replay_command.h"
#include "report/report_command.h"

namespace CLI {
class App;
}

namespace flashproof::cli {

// --help (or -h, or the verb `help`): the text to print on stdout.
struct HelpRequest {
  std::string text;
};
struct ListCommand {};
struct ReportCommand {
  report::ReportArguments arguments;
};

using Command = std::variant<HelpRequest, ListCommand, CheckCommand, ReplayCommand, ProveCommand, FuzzCommand,
                             ExportCommand, ReportCommand>;

// The verbs, in the order errors name them.
inline constexpr const char* kVerbs[] = {"list", "check", "prove", "replay", "fuzz", "report", "export"};

class CommandLine {
 public:
  CommandLine();
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // args: argv[1..]. Once per CommandLine. Throws UsageError (one line, the user's text unescaped:
  // the caller prints it through printable()) for bad input.
  Command parse(const std::vector<std::string>& args);

  // The App, its subcommands and their options (the tests compare --help with them).
  const CLI::App& app() const;

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// CommandLine().parse(args).
Command parse_command_line(const std::vector<std::string>& args);

}  // namespace flashproof::cli
