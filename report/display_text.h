// How numbers and text are shown in summary.md and index.html.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace flashproof::report {

// 3 significant digits ("0.482", "3.2e7"), whole numbers below 10^6 in full ("509"), and
// "inf", "-inf", "nan"; missing values as "-".
std::string number_text(double x);
std::string number_text(const std::optional<double>& x);

std::string html_escape(std::string_view s);
// Text for one Markdown table cell: '|' escaped, line breaks as spaces.
std::string markdown_cell(std::string_view s);

}  // namespace flashproof::report
