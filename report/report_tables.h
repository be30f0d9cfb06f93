// The report's tables as plain cells, rendered by both summary.md and index.html, so that the two
// show the same numbers.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/report_model.h"

namespace flashproof::report {

enum class Column {
  text,         // a name or a short label: kept on one line
  prose,        // free text (what a crash said): wraps
  number,       // right-aligned
  alert_count,  // a number, highlighted in HTML when not "0" (failures, crashes, error >= bound)
  code,         // a command or path: monospace, may wrap anywhere
  status,       // pass, fail, out-of-domain, crash: highlighted in HTML when fail or crash
};

struct Table {
  // Optional header groups spanning consecutive columns, e.g. {"ULPs", 3} over max, p50, p99;
  // empty, or covering every column ({"", 1} for a column without group).
  std::vector<std::pair<std::string, std::size_t>> groups;
  std::vector<std::string> header;
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
};

Table inputs_table(const Report& report);
// The records judged (pass or fail) by logit class, then the tensors judged by name
// (report.judged): what the certified tier reached, on the first screen.
Table judged_table(const Report& report);
Table status_table(const DtypeReport& d);
Table error_table(const DtypeReport& d);
// Verdicts per attention feature (dense, packed), per implementation; has_features: whether the
// dtype's records use any feature beyond dense batches (the table is shown only then).
Table feature_table(const Report& report, const DtypeReport& d);
bool has_features(const Report& report, const DtypeReport& d);
Table bound_table(const DtypeReport& d);
Table worst_table(const Report& report, const DtypeReport& d);
// At most limit rows; the caller says how many were left out.
Table failure_table(const Report& report, const DtypeReport& d, std::size_t limit);

// "case 17", or "case 17 (seed 42)" when the report holds several campaign seeds.
std::string case_label(const Report& report, const FuzzRecord& r);

}  // namespace flashproof::report
