// A minimal JSON reader and the string quoting the writers share: objects (keys unique, order
// kept), arrays, strings with every escape, numbers (kept as their text, so integers convert
// exactly), true, false, null. Used by case files (harness/), fuzz campaign records (fuzz/) and
// reports (report/), so that the project reads JSON one way.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flashproof {

struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  std::string text;  // a string's value, or a number's literal text
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  // Defined in json.cpp, where Json is complete: clang (libFuzzer, scripts/fuzz-parsers.sh) with
  // libstdc++ in C++20 instantiates the members' vector of pairs here otherwise, while Json is not.
  Json();
  ~Json();
  Json(const Json&);
  Json(Json&&) noexcept;
  Json& operator=(const Json&);
  Json& operator=(Json&&) noexcept;

  // The member named key of an object; nullptr when absent or not an object.
  const Json* find(std::string_view key) const;
  // A number's value (NaN when not a number); a string's or number's text as an integer
  // (fallback when it is not one).
  double number() const;
  long long integer(long long fallback = 0) const;
};

// The document's one value. Throws std::invalid_argument("invalid JSON at line L, column C: ...")
// for malformed text, duplicate keys, nesting deeper than 32 levels or trailing characters.
Json parse_json(std::string_view text);

// s as a JSON string literal, quotes included (control characters escaped).
std::string json_quote(std::string_view s);

// x with 17 significant digits (reads back as the same double); the project's records write a
// non-finite number as the string "inf", "-inf" or "nan", which JSON has no literal for.
std::string json_number(double x);

// v as JSON text. Numbers are written as their literal text, so what parse_json read is written
// back unchanged (a number built in code must hold a valid literal). one_line gives
// `{"a": 1, "b": [2]}`; otherwise one member or item per line, indented by two spaces per level,
// as case files are.
std::string to_json_text(const Json& v, bool one_line);

// Quoted for a one-line message: control characters shown as '?', long strings cut.
std::string shown(std::string_view s);

// s safe to print on a terminal as (part of) one line: control characters (line breaks, ESC, DEL,
// the C1 controls) and bytes that are not UTF-8 written as \n, \t, \x1b ...
// Every error message flashproof prints goes through it (cli/main.cpp), as does any text read
// from a file that is printed.
std::string printable(std::string_view s);

}  // namespace flashproof
