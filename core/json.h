// The project's JSON: values are nlohmann::ordered_json (members keep their order); one reader
// with the limits a hostile file needs, and one writer for every layout the project's files use.
// Case files (harness/), check records, fuzz campaign records (fuzz/), reports (report/) and bench
// results (bench/) are built as values and written through json::write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace flashproof {

namespace json {

using Value = nlohmann::ordered_json;

// The document's one value. Throws std::invalid_argument("invalid JSON at line L, column C: ...")
// for malformed text, a byte in a string that is not UTF-8, duplicate keys, nesting deeper than
// 32 levels, a number beyond the double range or trailing characters. Integers up to 64 bits are
// kept exactly (signed or unsigned); a larger one, or one with a fraction or exponent, is a double,
// and so is "-0" (the double -0.0, which the writer writes so).
Value parse(std::string_view text);
// The same for a named file or stream: its errors read "SOURCE: invalid JSON at line L, ...".
Value parse(std::string_view text, const std::string& source);

// How a finite double is written; every layout writes a non-finite one as the string "inf",
// "-inf" or "nan" (JSON has no literal for them). Integers are written exactly.
enum class Digits {
  g17,       // printf %.17g: reads back as the same double (records, case files)
  shortest,  // the shortest text that reads back as the same double (report results)
  g9,        // printf %.9g (bench timings)
  g6,        // printf %g, as std::ostream writes a double by default (bench summaries)
};

// Where line breaks go. A layout applies to one array or object; `inner` gives the layout of its
// members' values (by key; "*" for any other member and for every item of an array), and a value
// without a rule there takes this layout's indented, unbroken and digits with no rules of its own.
struct Layout {
  // One member or item per line, indented two spaces per nesting level, the closing bracket on a
  // line of its own; otherwise all on one line: {"a": 1, "b": [2]}.
  bool indented = false;
  // The text this layout would give with every line break and its indentation left out:
  // {"a": 1,"b": [2]} for an indented object. Applies to everything inside as well.
  bool unbroken = false;
  Digits digits = Digits::g17;
  // Indented only: members written on the previous member's line, after ", ".
  std::vector<std::string> same_line;
  // One line only: members that start a new line indented by this many spaces.
  std::vector<std::pair<std::string, int>> new_line;
  std::vector<std::pair<std::string, Layout>> inner;

  // Out of line, where Layout is complete (see Json's members below for why).
  Layout();
  ~Layout();
  Layout(const Layout&);
  Layout(Layout&&) noexcept;
  Layout& operator=(const Layout&);
  Layout& operator=(Layout&&) noexcept;
};

// {"a": 1, "b": [2]} at every level.
Layout one_line(Digits digits = Digits::g17);
// Every object and array one member or item per line, two spaces per level (case files, reports).
Layout indented(Digits digits = Digits::g17);
// The top object's members one per line, each member's value on one line (campaign.json, an
// exchange case's meta.json).
Layout top_lines(Digits digits = Digits::g17);
// layout with its line breaks left out (how a fuzz record embeds a case file or check record).
Layout unbroken(Layout layout);

// v as JSON text in the given layout, without a final line break. Strings are written with the
// escapes \" \\ \b \f \n \r \t, other control characters as \u00XX, everything else as is,
// except bytes that are not UTF-8, each written as U+FFFD (so that the text reads back).
std::string write(const Value& v, const Layout& layout = one_line());

// ---- Reading values: nullopt (or nullptr) when absent or of another kind. ----

// The member named key of an object; nullptr when v is not an object or has no such member.
const Value* find(const Value& v, std::string_view key);
// A JSON number.
std::optional<double> number(const Value& v);
// A JSON number, or one of the strings "inf", "-inf", "nan" (how records write non-finite ones).
std::optional<double> record_number(const Value& v);
// An integer number within the range of int64 (not 1.0, not 1e2, not "1").
std::optional<std::int64_t> integer(const Value& v);
// A non-negative integer number, or a string of decimal digits (how seeds are written, so that
// readers that turn numbers into doubles keep them), within the range of uint64.
std::optional<std::uint64_t> unsigned64(const Value& v);
// The string's text.
std::optional<std::string> string(const Value& v);

}  // namespace json

// Quoted for a one-line message: control characters shown as '?', long strings cut.
std::string shown(std::string_view s);

// s safe to print on a terminal as (part of) one line: control characters (line breaks, ESC, DEL,
// the C1 controls) and bytes that are not UTF-8 written as \n, \t, \x1b ...
// Every error message flashproof prints goes through it (cli/main.cpp), as does any text read
// from a file that is printed.
std::string printable(std::string_view s);

}  // namespace flashproof
