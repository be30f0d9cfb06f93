// The case-generator options that `flashproof fuzz` and `flashproof export` share (--seed, --dtype,
// --backward, --max-seqlen, --max-work), parsed once so the two commands build the same cases from
// the same command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "fuzz/case_generator.h"

namespace flashproof::cli {

// "a,b,c" -> {"a", "b", "c"}; an empty or repeated item throws UsageError naming opt.
std::vector<std::string> split_list(std::string_view opt, std::string_view text);

// Applies `item` when it is one of the generator options and returns true; false otherwise.
// seed_given is set by --seed. Bad values throw UsageError.
bool parse_generator_option(Arg& item, fuzz::GeneratorSettings& g, bool& seed_given);

}  // namespace flashproof::cli
