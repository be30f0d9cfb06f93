// The spellings CLI11 2.1 reads differently from the rest of the command: `--opt=` (an empty
// value; CLI11 would take the next argument as the value), `--flag=value` (CLI11 accepts
// `--flag=yes`), and an option whose value is missing at the end. Applied to a verb's arguments
// before CLI11 parses them.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace flashproof::cli {

// Rewrites every `--opt=value` of an option that takes a value as `--opt value` (so an empty value
// stays empty). Throws UsageError (one line) for `--flag=value` ("takes no value") and for an option
// that needs a value and is last ("needs a value"). Returns true when the arguments ask for help
// (-h or --help where an option is expected). Options the verb does not know are left to CLI11.
bool normalize_option_syntax(const CLI::App& verb, std::vector<std::string>& args);

// After parsing: what CLI11 left over for `verb` (its own leftovers, then its parent's), in order,
// without the "--" that ends the options.
std::vector<std::string> unexpected_arguments(const CLI::App& verb);

}  // namespace flashproof::cli
