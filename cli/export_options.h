// `flashproof export`'s command line: the generator options, --cases, --masks and --out, as an
// ExportSpec (the export itself: cli/export_command.h).
#pragma once

#include "cli/app_fwd.h"

#include "cli/export_command.h"
#include "cli/generator_options.h"

namespace flashproof::cli {

struct ExportCommand {
  ExportSpec spec;
  GeneratorOptionsGiven given;
};

void add_export_options(CLI::App& verb, ExportCommand& into);
// After parsing: unknown options, missing --seed, --cases or --out, options that disagree: UsageError.
void finish_export_options(const CLI::App& verb, const ExportCommand& command);

}  // namespace flashproof::cli
