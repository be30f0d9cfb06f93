#include "report/display_text.h"

#include <cmath>
#include <cstdio>

namespace flashproof::report {

std::string number_text(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (x == std::floor(x) && std::fabs(x) < 1e6) return std::to_string(static_cast<long long>(x));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  // "3.2e+07" -> "3.2e7", "1e-05" -> "1e-5": shorter, as readable.
  std::string s = buf;
  if (const auto e = s.find('e'); e != std::string::npos) {
    std::string exponent = s.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent.erase(0, exponent.find_first_not_of("+-"));
    exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
    s = s.substr(0, e + 1) + (negative ? "-" : "") + exponent;
  }
  return s;
}

std::string number_text(const std::optional<double>& x) { return x ? number_text(*x) : "-"; }

std::string html_escape(std::string_view s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string markdown_cell(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n' || c == '\r')
      o += ' ';
    else
      o += c;
  }
  return o;
}

}  // namespace flashproof::report
