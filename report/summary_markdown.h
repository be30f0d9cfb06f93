// summary.md: the report's tables in Markdown, for a terminal, a pull request or a commit.
#pragma once

#include <string>

#include "report/report_model.h"
#include "report/report_tables.h"

namespace flashproof::report {

std::string markdown_table(const Table& t);
std::string summary_markdown(const Report& report);

}  // namespace flashproof::report
