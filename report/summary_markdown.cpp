#include "report/summary_markdown.h"

#include <sstream>

#include "report/display_text.h"
#include "report/report_text.h"

namespace flashproof::report {
namespace {

// Markdown has one header row: a group's name goes in front of each of its columns' names.
std::vector<std::string> header_with_groups(const Table& t) {
  std::vector<std::string> header = t.header;
  std::size_t column = 0;
  for (const auto& [group, span] : t.groups)
    for (std::size_t k = 0; k < span && column < header.size(); ++k, ++column)
      if (!group.empty()) header[column] = group + ": " + header[column];
  return header;
}

}  // namespace

std::string markdown_table(const Table& t) {
  std::ostringstream s;
  const std::vector<std::string> header = header_with_groups(t);
  s << "|";
  for (const std::string& h : header) s << " " << markdown_cell(h) << " |";
  s << "\n|";
  for (const Column c : t.columns)
    s << (c == Column::number || c == Column::alert_count ? " ---: |" : " --- |");
  s << "\n";
  for (const auto& row : t.rows) {
    s << "|";
    for (std::size_t k = 0; k < row.size(); ++k) {
      const bool code = t.columns[k] == Column::code && row[k] != "-";
      s << " " << (code ? "`" : "") << markdown_cell(row[k]) << (code ? "`" : "") << " |";
    }
    s << "\n";
  }
  return s.str();
}

std::string summary_markdown(const Report& report) {
  std::ostringstream s;
  s << "# flashproof fuzz report\n\n"
    << one_line_summary(report) << ".\n\n"
    << markdown_table(inputs_table(report)) << "\n"
    << "## Judged\n\n" << kJudgedNote << "\n\n" << markdown_table(judged_table(report)) << "\n";
  if (!report.merged.warnings.empty()) {
    s << "Warnings:\n\n";
    for (const std::string& w : report.merged.warnings) s << "- " << markdown_cell(w) << "\n";
    s << "\n";
  }
  for (const DtypeReport& d : report.dtypes) {
    s << "## " << d.stats.dtype << "\n\n" << markdown_table(status_table(d)) << "\n";
    if (has_features(report, d)) s << "### Per feature\n\n" << markdown_table(feature_table(report, d)) << "\n";
    s << "### Errors per tensor\n\n"
      << kPercentileNote << " " << kRatioNote << "\n\n"
      << markdown_table(error_table(d)) << "\n";
    s << "### Error / rigorous bound\n\n"
      << kBoundNote << "\n\n"
      << markdown_table(bound_table(d)) << "\n";
    s << "### Worst cases\n\n" << kWorstNote << "\n\n";
    s << (d.worst.empty() ? std::string("No case with a bound.\n")
                          : markdown_table(worst_table(report, d)))
      << "\n";
    s << "### Failures and crashes\n\n";
    s << (d.failures.empty() ? std::string("None.\n")
                             : markdown_table(failure_table(report, d, d.failures.size())))
      << "\n";
  }
  return s.str();
}

}  // namespace flashproof::report
