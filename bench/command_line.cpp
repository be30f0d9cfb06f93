// The benches' command lines (command_line.h): the one file that includes CLI11.
#include "bench/command_line.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>

namespace flashproof::bench {
namespace {

// The check of an integer option, run on its text before CLI11 converts it.
template <class T>
CLI::Validator integer_in(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        return integer_in_range(text, lo, hi) ? std::string() : not_an_integer_in(text, lo, hi);
      },
      "in " + range_text(lo, hi));
}

template <class T>
CLI::Option* add_integer(CLI::App& app, const std::string& name, T& value, T lo, T hi, const std::string& description) {
  return app.add_option(name, value, description)->check(integer_in(lo, hi));
}

void print_and_exit(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) std::exit(app.exit(e));  // --help
  std::string why = e.what();
  std::replace(why.begin(), why.end(), '\n', ' ');
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), why.c_str());
  std::exit(2);
}

}  // namespace

Option& Option::show_default() {
  option_->capture_default_str();
  return *this;
}

Option& Option::default_text(const std::string& text) {
  option_->default_str(text);
  return *this;
}

Option& Option::type_name(const std::string& name) {
  option_->type_name(name);
  return *this;
}

Option& Option::required() {
  option_->required();
  return *this;
}

Option& Option::check(std::function<std::string(const std::string& text)> why_not) {
  option_->check(std::move(why_not));
  return *this;
}

CommandLine::CommandLine(const std::string& description, const std::string& name)
    : app_(std::make_unique<CLI::App>(description, name)) {
  app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app_->get_formatter()->column_width(34);
}

CommandLine::~CommandLine() = default;

Option CommandLine::integer(const std::string& name, int& value, int lo, int hi, const std::string& description) {
  return Option(add_integer(*app_, name, value, lo, hi, description));
}

Option CommandLine::integer(const std::string& name, std::int64_t& value, std::int64_t lo, std::int64_t hi,
                            const std::string& description) {
  return Option(add_integer(*app_, name, value, lo, hi, description));
}

Option CommandLine::integer(const std::string& name, std::uint64_t& value, std::uint64_t lo, std::uint64_t hi,
                            const std::string& description) {
  return Option(add_integer(*app_, name, value, lo, hi, description));
}

Option CommandLine::real(const std::string& name, double& value, double lo, double hi, const std::string& description) {
  return Option(app_->add_option(name, value, description)->check(CLI::Range(lo, hi)));
}

Option CommandLine::text(const std::string& name, std::string& value, const std::string& description) {
  return Option(app_->add_option(name, value, description));
}

Option CommandLine::choice(const std::string& name, std::string& value, const std::vector<std::string>& allowed,
                           const std::string& description) {
  return Option(app_->add_option(name, value, description)->check(CLI::IsMember(allowed)));
}

Option CommandLine::flag(const std::string& name, bool& value, const std::string& description) {
  return Option(app_->add_flag(name, value, description));
}

Option CommandLine::words(const std::string& name, const std::string& description, const std::string& shown,
                          std::function<void()> begin,
                          std::function<std::optional<std::string>(const std::string& item)> refused_why,
                          std::function<void()> commit) {
  CLI::Option* option = app_->add_option_function<std::string>(
      name,
      [name, begin, refused_why, commit](const std::string& value) {
        begin();
        std::size_t start = 0;
        while (true) {
          const std::size_t comma = value.find(',', start);
          const std::string text = value.substr(start, comma == std::string::npos ? comma : comma - start);
          if (text.empty()) throw CLI::ValidationError(name, "empty item in '" + value + "'");
          if (const std::optional<std::string> why = refused_why(text))
            throw CLI::ValidationError(name, why->empty() ? "bad item '" + text + "'" : *why);
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        commit();
      },
      description);
  option->type_name("LIST")->default_str(shown);
  return Option(option);
}

void CommandLine::footer(const std::string& text) { app_->footer(text); }

void CommandLine::after_parse(std::function<void()> check) {
  app_->final_callback([check] {
    try {
      check();
    } catch (const InvalidOption& e) {
      throw CLI::ValidationError(e.option, e.why);
    }
  });
}

bool CommandLine::given(const std::string& name) const { return app_->count(name) > 0; }

void CommandLine::parse_or_exit(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    print_and_exit(*app_, e);
  }
}

ItemParser<std::string> name_item(std::vector<std::string> allowed) {
  return [allowed](const std::string& text, std::string& why) -> std::optional<std::string> {
    if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
    std::string choices;
    for (const std::string& a : allowed) choices += (choices.empty() ? "" : ", ") + a;
    why = "unknown '" + text + "' (choose from " + choices + ")";
    return std::nullopt;
  };
}

void parse_no_options_or_exit(const char* description, const char* name, int argc, char** argv) {
  CommandLine command_line(description, name);
  command_line.parse_or_exit(argc, argv);
}

}  // namespace flashproof::bench
