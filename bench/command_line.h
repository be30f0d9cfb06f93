// The benches' command lines, on CLI11 behind this interface: --help lists every option with its
// default (exit 0); "--opt value" and "--opt=value" both work; a bad command line is one line on
// stderr, "<program>: <why>", and exit status 2. Integers are checked here rather than by CLI11's
// own conversion, which takes hexadecimal and turns "-1" into the largest unsigned value.
// CLI11 2.1 is header-only: every file that includes it compiles its code again (about 12 s at -O3),
// so it is included by command_line.cpp alone and the benches see only the classes below.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace flashproof::bench {

// A decimal integer in [lo, hi]: digits (a leading '-' only where lo < 0), nothing else.
template <class T>
std::optional<T> integer_in_range(std::string_view text, T lo, T hi) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) return std::nullopt;
  return value;
}

template <class T>
std::string range_text(T lo, T hi) {
  std::string text = "[";  // appended, not "[" + ...: GCC 12's -Wrestrict misfires on that at -O3
  text += std::to_string(lo);
  text += ", ";
  text += std::to_string(hi);
  text += ']';
  return text;
}

template <class T>
std::string not_an_integer_in(std::string_view text, T lo, T hi) {
  return "expected an integer in " + range_text(lo, hi) + ", got '" + std::string(text) + "'";
}

// A problem found once every option is read (CommandLine::after_parse), printed as "<option>: <why>".
struct InvalidOption {
  std::string option, why;
};

// An item of a list option: the value, or nullopt with `why` set.
template <class T>
using ItemParser = std::function<std::optional<T>(const std::string& item, std::string& why)>;

// One option of a CommandLine, for the settings that follow its declaration.
class Option {
 public:
  Option& show_default();  // --help shows the bound variable's value now as the default
  Option& default_text(const std::string& text);
  Option& type_name(const std::string& name);
  Option& required();
  // `why_not` returns "" for a good value, else the reason, before the value is converted.
  Option& check(std::function<std::string(const std::string& text)> why_not);

 private:
  friend class CommandLine;
  explicit Option(CLI::Option* option) : option_(option) {}
  CLI::Option* option_;
};

// A bench's command line: options bound to variables, given twice keep the last value.
class CommandLine {
 public:
  CommandLine(const std::string& description, const std::string& name);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // A decimal integer in [lo, hi].
  Option integer(const std::string& name, int& value, int lo, int hi, const std::string& description);
  Option integer(const std::string& name, std::int64_t& value, std::int64_t lo, std::int64_t hi,
                 const std::string& description);
  Option integer(const std::string& name, std::uint64_t& value, std::uint64_t lo, std::uint64_t hi,
                 const std::string& description);
  // A number in [lo, hi].
  Option real(const std::string& name, double& value, double lo, double hi, const std::string& description);
  Option text(const std::string& name, std::string& value, const std::string& description);
  // One of `allowed`.
  Option choice(const std::string& name, std::string& value, const std::vector<std::string>& allowed,
                const std::string& description);
  Option flag(const std::string& name, bool& value, const std::string& description);
  // "--name a,b,c" as one word: split at commas, an empty item refused, a repeated item dropped;
  // the list replaces the default. `item` turns one item into a T, or says why it cannot.
  template <class T>
  Option list(const std::string& name, std::vector<T>& values, const std::string& description, ItemParser<T> item);

  void footer(const std::string& text);
  // Runs after every option is read; may throw InvalidOption.
  void after_parse(std::function<void()> check);
  bool given(const std::string& name) const;
  // Parses argv; --help prints the options and exits 0; an error prints one line and exits 2.
  void parse_or_exit(int argc, char** argv);

 private:
  Option words(const std::string& name, const std::string& description, const std::string& shown,
               std::function<void()> begin,
               std::function<std::optional<std::string>(const std::string& item)> refused_why,
               std::function<void()> commit);
  std::unique_ptr<CLI::App> app_;
};

template <class T>
Option CommandLine::list(const std::string& name, std::vector<T>& values, const std::string& description,
                         ItemParser<T> item) {
  std::string shown;
  for (const T& x : values) {
    if constexpr (std::is_convertible_v<T, std::string> || std::is_arithmetic_v<T>) {
      if (!shown.empty()) shown += ',';
      if constexpr (std::is_arithmetic_v<T>) shown += std::to_string(x);
      else shown += std::string(x);
    }
  }
  auto items = std::make_shared<std::vector<T>>();
  return words(
      name, description, shown, [items] { items->clear(); },
      [items, item](const std::string& text) -> std::optional<std::string> {
        std::string why;
        const std::optional<T> x = item(text, why);
        if (!x) return why;
        if (std::find(items->begin(), items->end(), *x) == items->end()) items->push_back(*x);
        return std::nullopt;
      },
      [items, &values] { values = *items; });
}

// An item of a list of integers in [lo, hi].
template <class T>
ItemParser<T> integer_item(T lo, T hi) {
  return [lo, hi](const std::string& text, std::string& why) {
    const std::optional<T> x = integer_in_range(text, lo, hi);
    if (!x) why = not_an_integer_in(text, lo, hi);
    return x;
  };
}

// An item of a list of names, one of `allowed`.
ItemParser<std::string> name_item(std::vector<std::string> allowed);

// The command line of a bench that takes no options: --help prints `description`; anything else is
// an error (one line, exit 2).
void parse_no_options_or_exit(const char* description, const char* name, int argc, char** argv);

}  // namespace flashproof::bench
