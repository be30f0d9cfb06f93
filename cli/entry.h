// The whole flashproof command line as one call: the arguments (without the program name) parsed
// (cli/command_line.h), the verb run, its output on std::cout / std::cerr. cli/main.cpp is this
// call; the Python package's console command `flashproof` (python/flashproof/_cli.py, through
// flashproof._core.main) is the same call inside the extension module.
#pragma once

#include <string>
#include <vector>

namespace flashproof::cli {

// Returns the exit status (docs/spec.md, "The command line"): 0 pass, 1 a failed check or case, 2
// bad input (one line on stderr: "flashproof: WHY"), 3 an internal error, 4 not judged (check,
// replay and fuzz with --require-judged). Never throws.
int run_command_line(const std::vector<std::string>& args);

}  // namespace flashproof::cli
