#include "cli/generator_options.h"

#include <algorithm>
#include <optional>

#include "cli/option_values.h"
#include "cli/value_option.h"

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

void add_generator_options(CLI::App& verb, fuzz::GeneratorSettings& g, GeneratorOptionsGiven& given) {
  add_value_option(verb, "--seed", "S", "the campaign seed: every case is a function of it and its index (required)",
                   [&](const std::string& name, const std::string& v) {
                     g.seed = parse_number<std::uint64_t>(name, v);
                     given.seed = true;
                   });
  add_value_option(verb, "--dtype", "D[,D...]", "the dtypes to draw from: fp16, bf16, fp32 (default fp16,bf16)",
                   [&](const std::string& name, const std::string& v) {
                     g.dtypes.clear();
                     for (const std::string& item : split_list(name, v)) {
                       const std::optional<DType> t = parse_dtype(item);
                       if (!t) throw UsageError("--dtype: unknown dtype '" + item + "' (fp16, bf16, fp32)");
                       g.dtypes.push_back(*t);
                     }
                   });
  add_value_option(verb, "--backward", "yes|no|both",
                   "check the backward pass too: yes, no, or both at random per case (default both)",
                   [&](const std::string&, const std::string& v) {
                     using D = fuzz::GeneratorSettings::Direction;
                     if (v == "yes") g.direction = D::backward;
                     else if (v == "no") g.direction = D::forward;
                     else if (v == "both") g.direction = D::both;
                     else throw UsageError("--backward expects yes, no or both, got '" + v + "'");
                   });
  // The default profile's size limits; the first one given is remembered (the production profile
  // refuses them).
  const auto limit = [&given](std::int64_t& field) {
    return [&given, at = &field](const std::string& name, const std::string& v) {
      *at = parse_count(name, v);
      if (given.limit.empty()) given.limit = name;
    };
  };
  add_value_option(verb, "--max-seqlen", "L", "the longest sequence drawn (default 512; default profile only)",
                   limit(g.max_seqlen));
  add_value_option(verb, "--max-work", "W",
                   "the most multiply-adds (batch*heads*seqlen_q*seqlen_k*head_dim) of a drawn case "
                   "(default 2097152; default profile only)",
                   limit(g.max_work));
  add_value_option(verb, "--profile", "default|production|packed|score-mod|decode",
                   "production: the sizes of real models (sequences to 131072, index and grid limits); "
                   "packed: packed batches of sequences up to --max-seqlen each; score-mod: soft caps and "
                   "ALiBi on default or packed cases; decode: KV caches (paged or not) of capacity up to "
                   "--max-seqlen, split counts, forward only (docs/fuzz.md)",
                   [&](const std::string&, const std::string& v) {
                     const std::optional<fuzz::Profile> p = fuzz::parse_profile(v);
                     if (!p)
                       throw UsageError("--profile expects default, production, packed, score-mod or decode, got '" + v +
                                        "'");
                     g.profile = *p;
                   });
}

void check_generator_options(const fuzz::GeneratorSettings& g, const GeneratorOptionsGiven& given) {
  // Refused rather than ignored: a limit the user asked for and the campaign did not keep would
  // be a surprise hours later.
  if (g.profile == fuzz::Profile::production && !given.limit.empty())
    throw UsageError(given.limit + " does not apply to --profile production (its sizes are the profile's own; "
                     "docs/fuzz.md, Production profile)");
  if (g.profile == fuzz::Profile::decode && g.direction == fuzz::GeneratorSettings::Direction::backward)
    throw UsageError("--profile decode draws KV caches, which are forward only: --direction backward does not apply");
}

}  // namespace flashproof::cli
