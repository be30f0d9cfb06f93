// The benches' command lines, on CLI11: --help lists every option with its default (exit 0);
// "--opt value" and "--opt=value" both work; a bad command line is one line on stderr,
// "<program>: <why>", and exit status 2. Integers are checked here rather than by CLI11's own
// conversion, which takes hexadecimal and turns "-1" into the largest unsigned value.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

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
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

template <class T>
std::string not_an_integer_in(std::string_view text, T lo, T hi) {
  return "expected an integer in " + range_text(lo, hi) + ", got '" + std::string(text) + "'";
}

// The check of an integer option, run on its text before CLI11 converts it.
template <class T>
CLI::Validator integer_in(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        return integer_in_range(text, lo, hi) ? std::string() : not_an_integer_in(text, lo, hi);
      },
      "in " + range_text(lo, hi));
}

// "--name a,b,c" as one word: split at commas, an empty item refused, a repeated item dropped;
// the list replaces the default. `item` turns one item into a T, or returns why it cannot.
template <class T>
CLI::Option* add_list(CLI::App& app, const std::string& name, std::vector<T>& list, const std::string& description,
                      std::function<std::optional<T>(const std::string& item, std::string& why)> item) {
  std::string shown;
  for (const T& x : list) {
    if constexpr (std::is_convertible_v<T, std::string>) shown += (shown.empty() ? "" : ",") + std::string(x);
    else if constexpr (std::is_arithmetic_v<T>) shown += (shown.empty() ? "" : ",") + std::to_string(x);
  }
  return app
      .add_option_function<std::string>(
          name,
          [name, &list, item](const std::string& value) {
            std::vector<T> items;
            std::size_t begin = 0;
            while (true) {
              const std::size_t comma = value.find(',', begin);
              const std::string text = value.substr(begin, comma == std::string::npos ? comma : comma - begin);
              if (text.empty()) throw CLI::ValidationError(name, "empty item in '" + value + "'");
              std::string why;
              const std::optional<T> x = item(text, why);
              if (!x) throw CLI::ValidationError(name, why);
              if (std::find(items.begin(), items.end(), *x) == items.end()) items.push_back(*x);
              if (comma == std::string::npos) break;
              begin = comma + 1;
            }
            list = items;
          },
          description)
      ->type_name("LIST")
      ->default_str(shown);
}

// An item of a list of integers in [lo, hi].
template <class T>
std::function<std::optional<T>(const std::string&, std::string&)> integer_item(T lo, T hi) {
  return [lo, hi](const std::string& text, std::string& why) {
    const std::optional<T> x = integer_in_range(text, lo, hi);
    if (!x) why = not_an_integer_in(text, lo, hi);
    return x;
  };
}

// An item of a list of names, one of `allowed`.
inline std::function<std::optional<std::string>(const std::string&, std::string&)> name_item(
    std::vector<std::string> allowed) {
  return [allowed](const std::string& text, std::string& why) -> std::optional<std::string> {
    if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
    std::string choices;
    for (const std::string& a : allowed) choices += (choices.empty() ? "" : ", ") + a;
    why = "unknown '" + text + "' (choose from " + choices + ")";
    return std::nullopt;
  };
}

// A new command line: options given twice keep the last value, as the benches' scripts expect.
inline void configure(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(34);
}

// Parses argv; --help prints the options and exits 0; an error prints one line and exits 2.
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) std::exit(app.exit(e));  // --help
    std::string why = e.what();
    std::replace(why.begin(), why.end(), '\n', ' ');
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), why.c_str());
    std::exit(2);
  }
}

// The command line of a bench that takes no options: --help prints `description`; anything else is
// an error (one line, exit 2).
inline void parse_no_options_or_exit(const char* description, const char* name, int argc, char** argv) {
  CLI::App app{description, name};
  configure(app);
  parse_or_exit(app, argc, argv);
}

}  // namespace flashproof::bench
