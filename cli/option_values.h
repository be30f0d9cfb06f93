// The values of the flashproof command's options: numbers checked with one-line errors
// (UsageError: exit status 2). The command line's syntax is CLI11's (cli/command_line.h).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

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

}  // namespace flashproof::cli
