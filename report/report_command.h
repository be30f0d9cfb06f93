// `flashproof report DIR... --out DIR`: merges fuzz campaign directories into one report
// (docs/reports.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace flashproof::report {

// args: what follows "report" on the command line. Writes the report and prints the path of its
// index.html and a one-line summary on out (warnings, e.g. skipped lines, on err). Returns 0 when
// written, 2 for bad input: one line "flashproof report: ..." on err, and no file claimed done.
int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace flashproof::report
