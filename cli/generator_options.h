// The case-generator options that `flashproof fuzz` and `flashproof export` share (--seed, --dtype,
// --backward, --max-seqlen, --max-work, --profile), declared once so the two commands build the
// same cases from the same command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/app_fwd.h"

#include "fuzz/case_generator.h"

namespace flashproof::cli {

// "a,b,c" -> {"a", "b", "c"}; an empty or repeated item throws UsageError naming opt.
std::vector<std::string> split_list(std::string_view opt, std::string_view text);

// Which generator options were given, for the checks that span options.
struct GeneratorOptionsGiven {
  bool seed = false;
  std::string limit;  // "--max-seqlen" or "--max-work" when one was given (the first)
};

// Declares the generator options on `verb`; their values go to `g` (bad ones throw UsageError).
void add_generator_options(CLI::App& verb, fuzz::GeneratorSettings& g, GeneratorOptionsGiven& given);

// After parsing: throws UsageError for generator options that do not go together (--max-seqlen or
// --max-work with --profile production, whose sizes are its own).
void check_generator_options(const fuzz::GeneratorSettings& g, const GeneratorOptionsGiven& given);

}  // namespace flashproof::cli
