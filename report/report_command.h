// `flashproof report DIR... --out DIR`: merges fuzz campaign directories into one report
// (docs/reports.md). The verb's options are declared here, on a CLI11 App (the `report`
// subcommand of flashproof's command line, or one of its own in report_command).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace flashproof::report {

inline constexpr const char* kReportSynopsis = "flashproof report DIR... --out DIR";

struct ReportArguments {
  std::vector<std::string> dirs;
  std::string out;
};

// Declares report's positionals and options on `verb`, bound to `into`; a repeated or empty --out
// throws std::invalid_argument as it is parsed.
void add_report_options(CLI::App& verb, ReportArguments& into);
// After parsing: throws std::invalid_argument (one line) for an unknown option, a missing --out or
// no directory.
void check_report_arguments(const CLI::App& verb, const ReportArguments& arguments);

// Writes the report and prints the path of its index.html and a one-line summary on out (warnings,
// e.g. skipped lines, on err). Returns 0 when written, 2 for bad input: one line
// "flashproof report: ..." on err, and no file claimed done.
int run_report(const ReportArguments& arguments, std::ostream& out, std::ostream& err);

// args: what follows "report" on the command line; parses them (--help: the usage on out, 0) and
// runs run_report. Bad arguments: one line "flashproof report: ..." on err, 2.
int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace flashproof::report
