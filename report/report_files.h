// Writing a report's files into its directory.
#pragma once

#include <string>

#include "report/report_model.h"

namespace flashproof::report {

// Writes OUT/cases/* (one case file per listed worst case), OUT/results.json, OUT/summary.md and,
// last, OUT/index.html. Each file is written beside its name and renamed into place, so none is
// ever half-written under its name. Throws std::invalid_argument (one line) on failure.
void write_report_files(const Report& report, const std::string& out_dir);

}  // namespace flashproof::report
