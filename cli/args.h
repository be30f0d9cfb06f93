// The command line's parsing pieces shared by the flashproof commands (cli/main.cpp and each
// command's file): options as "--opt value" or "--opt=value", numbers checked with one-line
// errors (UsageError: exit status 2).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace flashproof::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Option values are echoed in errors; printable() (core/json.h) escapes them where printed.
template <class T>
inline T parse_number(std::string_view opt, std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size())
    throw UsageError(std::string(opt) + " is out of range, got '" + std::string(text) + "'");
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError(std::string(opt) + " expects a number, got '" + std::string(text) + "'");
  return value;
}

inline float parse_float(std::string_view opt, std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || std::fabs(v) > 3.4028234663852886e38)
    throw UsageError(std::string(opt) + " expects a finite fp32 number, got '" + s + "'");
  return static_cast<float>(v);
}

// A count in 1 .. max. Every count narrowed to a smaller type (int, unsigned) passes that type's
// limit or a tighter one as max, so that no value wraps silently.
inline std::int64_t parse_count(std::string_view opt, std::string_view text,
                                std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  const auto v = parse_number<std::int64_t>(opt, text);
  if (v < 1) throw UsageError(std::string(opt) + " must be >= 1, got " + std::string(text));
  if (v > max) throw UsageError(std::string(opt) + " must be at most " + std::to_string(max) + ", got " + std::string(text));
  return v;
}

// Limits of the options narrowed to int or unsigned (docs/bad-input.md): the reference's largest
// MPFR precision, and more host threads than any machine has.
inline constexpr std::int64_t kMaxPrecisionBits = 65536;
inline constexpr std::int64_t kMaxThreads = 4096;

// Splits "--opt=value" and "--opt value"; flags take no value.
struct Args {
  std::vector<std::string_view> items;
  std::size_t pos = 0;
  bool done() const { return pos >= items.size(); }
};

// One command-line item: an option (with its value when given as --opt=value) or a positional.
struct Arg {
  Args& a;
  std::string_view name, value;
  bool has_value = false;
  explicit Arg(Args& args) : a(args), name(args.items[args.pos++]) {
    if (const auto eq = name.find('='); name.starts_with("--") && eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
  }
  void flag() const {
    if (has_value) throw UsageError(std::string(name) + " takes no value");
  }
  std::string_view next() {
    if (has_value) return value;
    if (a.done()) throw UsageError(std::string(name) + " needs a value");
    return a.items[a.pos++];
  }
};

}  // namespace flashproof::cli
