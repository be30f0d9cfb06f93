#include "cli/option_syntax.h"

#include <cstddef>
#include <utility>

#include "cli/option_values.h"

namespace flashproof::cli {

bool normalize_option_syntax(const CLI::App& verb, std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size() + 1);
  bool help = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {  // the rest are positionals
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const bool is_long = arg.size() > 2 && arg.starts_with("--");
    const std::size_t eq = is_long ? arg.find('=') : std::string::npos;
    const std::string name = arg.substr(0, eq);
    const CLI::Option* option = arg.size() > 1 && arg[0] == '-' ? verb.get_option_no_throw(name) : nullptr;
    if (option == nullptr) {
      out.push_back(arg);
      continue;
    }
    const bool takes_value = option->get_items_expected_max() != 0;
    if (!takes_value) {
      if (eq != std::string::npos) throw UsageError(name + " takes no value");
      if (option == verb.get_help_ptr()) help = true;
      out.push_back(arg);
    } else if (eq != std::string::npos) {
      out.push_back(name);
      out.push_back(arg.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      out.push_back(arg);
      out.push_back(args[++i]);
    } else if (option->get_items_expected_min() > 0) {
      throw UsageError(name + " needs a value");
    } else {
      out.push_back(arg);  // its value is optional: the option says what an absent one means
    }
  }
  args = std::move(out);
  return help;
}

std::vector<std::string> unexpected_arguments(const CLI::App& verb) {
  std::vector<std::string> left = verb.remaining();
  if (const CLI::App* parent = verb.get_parent()) {
    const std::vector<std::string> above = parent->remaining();
    left.insert(left.end(), above.begin(), above.end());
  }
  std::erase(left, "--");
  return left;
}

}  // namespace flashproof::cli
