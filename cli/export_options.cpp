#include "cli/export_options.h"

#include "cli/option_syntax.h"
#include "cli/option_values.h"
#include "cli/value_option.h"

namespace flashproof::cli {

void add_export_options(CLI::App& verb, ExportCommand& into) {
  ExportSpec& spec = into.spec;
  using S = const std::string&;
  add_generator_options(verb, spec.generator, into.given);
  add_value_option(verb, "--cases", "N", "export the campaign's cases 0 .. N-1 (required; at most 1000000)",
                   [&](S n, S v) { spec.cases = static_cast<std::uint64_t>(parse_count(n, v, kMaxExportCases)); });
  add_value_option(verb, "--masks", "none|causal-square|any",
                   "none: no mask; causal-square: causal with both lengths the shorter one (where SDPA's "
                   "top-left is_causal agrees); any: as drawn (default)",
                   [&](S, S v) {
                     if (v == "any") spec.masks = MaskRewrite::any;
                     else if (v == "none") spec.masks = MaskRewrite::none;
                     else if (v == "causal-square") spec.masks = MaskRewrite::causal_square;
                     else throw UsageError("--masks expects none, causal-square or any, got '" + v + "'");
                   });
  add_value_option(verb, "--support", "FILE",
                   "a backend's declared support (JSON, docs/plugging-in.md): each case fitted into it, as a "
                   "campaign over imported:<backend> fits it when its info.json declares the same",
                   [&](S, S v) { spec.support_file = v; });
  add_value_option(verb, "--out", "DIR", "the directory of the case directories and index.json (required)",
                   [&](S, S v) {
                     if (v.empty()) throw UsageError("--out needs a directory");
                     spec.out = v;
                   });
}

void finish_export_options(const CLI::App& verb, const ExportCommand& command) {
  for (const std::string& extra : unexpected_arguments(verb))
    throw UsageError("unknown option '" + extra + "' for export");
  if (!command.given.seed) throw UsageError("export needs --seed S (the cases are a function of it)");
  check_generator_options(command.spec.generator, command.given);
  if (command.spec.cases == 0) throw UsageError("export needs --cases N");
  if (command.spec.out.empty()) throw UsageError("export needs --out DIR");
}

}  // namespace flashproof::cli
