#include "cli/generator_options.h"

#include <algorithm>
#include <optional>

namespace flashproof::cli {

std::vector<std::string> split_list(std::string_view opt, std::string_view text) {
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = text.find(',', begin);
    const std::string item(text.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin));
    // An empty list must not fall back to a default, and a repeated item would run twice.
    if (item.empty()) throw UsageError(std::string(opt) + ": empty name in '" + std::string(text) + "'");
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw UsageError(std::string(opt) + ": '" + item + "' is given twice");
    out.push_back(item);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return out;
}

bool parse_generator_option(Arg& item, fuzz::GeneratorSettings& g, GeneratorOptionsGiven& given) {
  const std::string_view arg = item.name;
  if (arg == "--seed") {
    g.seed = parse_number<std::uint64_t>(arg, item.next());
    given.seed = true;
  } else if (arg == "--dtype") {
    g.dtypes.clear();
    for (const std::string& name : split_list(arg, item.next())) {
      const std::optional<DType> t = parse_dtype(name);
      if (!t) throw UsageError("--dtype: unknown dtype '" + name + "' (fp16, bf16, fp32)");
      g.dtypes.push_back(*t);
    }
  } else if (arg == "--backward") {
    const std::string_view v = item.next();
    using D = fuzz::GeneratorSettings::Direction;
    if (v == "yes") g.direction = D::backward;
    else if (v == "no") g.direction = D::forward;
    else if (v == "both") g.direction = D::both;
    else throw UsageError("--backward expects yes, no or both, got '" + std::string(v) + "'");
  } else if (arg == "--max-seqlen") {
    g.max_seqlen = parse_count(arg, item.next());
    if (given.limit.empty()) given.limit = arg;
  } else if (arg == "--max-work") {
    g.max_work = parse_count(arg, item.next());
    if (given.limit.empty()) given.limit = arg;
  } else if (arg == "--profile") {
    const std::string_view v = item.next();
    const std::optional<fuzz::Profile> p = fuzz::parse_profile(v);
    if (!p) throw UsageError("--profile expects default or production, got '" + std::string(v) + "'");
    g.profile = *p;
  } else {
    return false;
  }
  return true;
}

void check_generator_options(const fuzz::GeneratorSettings& g, const GeneratorOptionsGiven& given) {
  // Refused rather than ignored: a limit the user asked for and the campaign did not keep would
  // be a surprise hours later.
  if (g.profile == fuzz::Profile::production && !given.limit.empty())
    throw UsageError(given.limit + " does not apply to --profile production (its sizes are the profile's own; "
                     "docs/fuzz.md, Production profile)");
}

}  // namespace flashproof::cli
