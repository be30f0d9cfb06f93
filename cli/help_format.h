// How `flashproof VERB --help` lays out a verb's help: the usage line first, then what the verb
// does, every option with its description, and the notes (CLI11's own layout puts the description
// first and names the options [OPTIONS]).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace flashproof::cli {

// Sets `verb`'s help to "usage: SYNOPSIS", its description, its positionals and options (CLI11's
// columns), and its footer.
void set_verb_help(CLI::App& verb, std::string synopsis);

}  // namespace flashproof::cli
