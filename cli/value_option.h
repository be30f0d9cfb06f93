// One way to declare an option that takes a value: CLI11 finds it (`--opt value` or
// `--opt=value`), and `apply` converts and stores it when it is met, so the first bad value on the
// command line is the one reported and a repeated option's last value wins.
#pragma once

#include <string>
#include <utility>

#include <CLI/CLI.hpp>

namespace flashproof::cli {

// apply(name, value) throws UsageError for a bad value.
template <class Apply>
CLI::Option* add_value_option(CLI::App& verb, const std::string& name, const std::string& value_name,
                              const std::string& description, Apply apply) {
  return verb
      .add_option_function<std::string>(
          name, [name, apply = std::move(apply)](const std::string& value) { apply(name, value); }, description)
      ->type_name(value_name)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->trigger_on_parse();
}

}  // namespace flashproof::cli
