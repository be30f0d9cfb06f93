#include "report/html_page.h"

#include <optional>
#include <sstream>

#include "core/verdict.h"
#include "report/display_text.h"
#include "report/report_plots.h"
#include "report/report_text.h"

namespace flashproof::report {
namespace {

// Failures listed per dtype on the page; results.json and summary.md list them all.
constexpr std::size_t kFailuresShown = 100;

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Verdana, sans-serif; font-size: 15px; color: #222;
       margin: 24px 32px; line-height: 1.45; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 22px; border-bottom: 2px solid #ccc; margin-top: 44px; padding-bottom: 4px; }
h3 { font-size: 17px; margin: 28px 0 6px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 14px; }
th, td { border: 1px solid #c8c8c8; padding: 4px 9px; vertical-align: top; white-space: nowrap; }
th { background: #eef2f7; font-weight: 600; }
th.group { white-space: normal; }  /* a group over one narrow column wraps, not widens it */
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.alert { background: #fde0de; color: #8a1010; font-weight: bold; }
td.code { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; overflow-wrap: anywhere;
          white-space: normal; min-width: 300px; max-width: 520px; }
td.prose { white-space: normal; min-width: 200px; max-width: 420px; }
p.note { color: #4a4a4a; max-width: 1100px; margin: 4px 0; }
p.summary { font-size: 16px; }
.warnings { background: #fff7d6; border: 1px solid #e0c040; padding: 6px 18px; max-width: 1100px; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(400px, 1fr));
           gap: 22px 26px; max-width: 1500px; }
figure { margin: 0; }
figure svg { width: 100%; height: auto; max-width: 560px; display: block; }
figcaption { font-size: 13px; color: #4a4a4a; max-width: 560px; margin-top: 4px; }
nav a { margin-right: 14px; }
)";

std::string cell_class(Column c, const std::string& value) {
  switch (c) {
    case Column::text: return "";
    case Column::prose: return " class=\"prose\"";
    case Column::number: return " class=\"number\"";
    case Column::alert_count: return value == "0" ? " class=\"number\"" : " class=\"number alert\"";
    case Column::code: return " class=\"code\"";
    case Column::status: {  // a case status's record name (core/verdict.h)
      const std::optional<CaseStatus> status = parse_case_status(value);
      return status && (is_failure(*status) || *status == CaseStatus::crash) ? " class=\"alert\"" : "";
    }
  }
  return "";
}

void section(std::ostringstream& s, const Report& report, const DtypeReport& d) {
  const std::string& dtype = d.stats.dtype;
  s << "<section id=\"dtype-" << html_escape(dtype) << "\">\n<h2>" << html_escape(dtype)
    << "</h2>\n"
    << "<p class=\"note\">" << d.stats.records << " records.</p>\n"
    << html_table(status_table(d))
    << (has_features(report, d) ? "<h3>Per feature</h3>\n" + html_table(feature_table(report, d)) : std::string())
    << "<h3>Errors per tensor</h3>\n<p class=\"note\">"
    << html_escape(kPercentileNote) << "</p>\n"
    << "<p class=\"note\">" << html_escape(kRatioNote) << "</p>\n"
    << html_table(error_table(d)) << "<h3>Error / rigorous bound</h3>\n<p class=\"note\">"
    << html_escape(kBoundNote) << "</p>\n"
    << html_table(bound_table(d)) << "<h3>Plots</h3>\n<div class=\"figures\">\n";
  for (const Figure& f : dtype_figures(report, d))
    s << "<figure>" << f.svg << "<figcaption>" << html_escape(f.caption)
      << "</figcaption></figure>\n";
  s << "</div>\n<h3>Worst cases</h3>\n<p class=\"note\">" << html_escape(kWorstNote) << "</p>\n"
    << (d.worst.empty() ? "<p>No case with a bound.</p>\n" : html_table(worst_table(report, d)))
    << "<h3>Failures and crashes</h3>\n";
  if (d.failures.empty())
    s << "<p>None.</p>\n";
  else
    s << html_table(failure_table(report, d, kFailuresShown));
  if (d.failures.size() > kFailuresShown)
    s << "<p class=\"note\">" << d.failures.size() - kFailuresShown
      << " more: results.json and summary.md list them all.</p>\n";
  s << "</section>\n";
}

}  // namespace

std::string html_table(const Table& t) {
  std::ostringstream s;
  s << "<table>\n";
  if (!t.groups.empty()) {
    s << "<tr>";
    for (const auto& [group, span] : t.groups)
      s << "<th class=\"group\" colspan=\"" << span << "\">" << html_escape(group) << "</th>";
    s << "</tr>\n";
  }
  s << "<tr>";
  for (const std::string& h : t.header) s << "<th>" << html_escape(h) << "</th>";
  s << "</tr>\n";
  for (const auto& row : t.rows) {
    s << "<tr>";
    for (std::size_t k = 0; k < row.size(); ++k)
      s << "<td" << cell_class(t.columns[k], row[k]) << ">" << html_escape(row[k]) << "</td>";
    s << "</tr>\n";
  }
  s << "</table>\n";
  return s.str();
}

std::string html_page(const Report& report) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<title>flashproof fuzz report</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n"
    << "<h1>flashproof fuzz report</h1>\n<p class=\"summary\">"
    << html_escape(one_line_summary(report)) << ".</p>\n"
    << html_table(inputs_table(report))
    << "<h2>Judged</h2>\n<p>" << html_escape(kJudgedNote) << "</p>\n"
    << html_table(judged_table(report));
  if (!report.merged.warnings.empty()) {
    s << "<div class=\"warnings\"><p>Warnings:</p><ul>\n";
    for (const std::string& w : report.merged.warnings) s << "<li>" << html_escape(w) << "</li>\n";
    s << "</ul></div>\n";
  }
  s << "<nav>dtypes:";
  for (const DtypeReport& d : report.dtypes)
    s << " <a href=\"#dtype-" << html_escape(d.stats.dtype) << "\">" << html_escape(d.stats.dtype)
      << "</a>";
  s << "</nav>\n";
  for (const DtypeReport& d : report.dtypes) section(s, report, d);
  s << "</body>\n</html>\n";
  return s.str();
}

}  // namespace flashproof::report
