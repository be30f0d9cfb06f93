#include "fuzz/shell_quote.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace flashproof::fuzz {

std::string shell_quoted(std::string_view s) {
  const auto plain = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("_./:=@%+,-").find(ch) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), plain)) return std::string(s);
  const bool control = std::any_of(s.begin(), s.end(), [](char ch) {
    return static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f;
  });
  std::string o = control ? "$'" : "'";
  for (char ch : s) {
    char buf[8];
    if (!control) o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    else if (ch == '\'' || ch == '\\') o += '\\', o += ch;
    else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f)
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(ch)), o += buf;
    else o += ch;
  }
  return o + "'";
}

}  // namespace flashproof::fuzz
