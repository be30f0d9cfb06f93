// libFuzzer target: flashproof's command line (cli/command_line.h), argv split from the input at
// NUL bytes (the first item is the verb). A parse must return a command or throw UsageError; any
// other exception, a crash or a sanitizer report fails. Only the parse runs: nothing is read,
// written or run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli/command_line.h"
#include "cli/option_values.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args;
  std::size_t begin = 0;
  while (begin <= input.size()) {
    const std::size_t nul = input.find('\0', begin);
    args.emplace_back(input.substr(begin, nul == std::string_view::npos ? std::string_view::npos : nul - begin));
    if (nul == std::string_view::npos) break;
    begin = nul + 1;
  }
  try {
    const flashproof::cli::Command command = flashproof::cli::parse_command_line(args);
    if (const auto* help = std::get_if<flashproof::cli::HelpRequest>(&command); help != nullptr && help->text.empty())
      __builtin_trap();
  } catch (const flashproof::cli::UsageError& e) {
    if (std::string_view(e.what()).empty()) __builtin_trap();  // an error with nothing to say
  }
  return 0;
}
