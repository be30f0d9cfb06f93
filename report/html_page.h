// index.html: one self-contained page (inline CSS and SVG, no script, nothing fetched) with the
// report's tables and plots.
#pragma once

#include <string>

#include "report/report_model.h"
#include "report/report_tables.h"

namespace flashproof::report {

std::string html_table(const Table& t);
std::string html_page(const Report& report);

}  // namespace flashproof::report
