// The flashproof command (docs/usage.md) as one call (cli/entry.h): the command line parsed
// (cli/command_line.h), then the verb run. Bad input of any kind gets a one-line error on stderr and
// exit status 2; a failed check exits 1.
#include "cli/entry.h"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli/command_line.h"
#include "cli/option_values.h"
#include "core/json.h"
#include "harness/imported_attention.h"
#include "kernels/registry.h"

namespace flashproof::cli {
namespace {

int run_list() {
  for (AttentionImpl* impl : implementations())
    std::cout << impl->name() << "\t" << impl->where() << "\t" << impl->description() << "\n";
  // Not part of `--impl all`: campaigns and properties draw them as an option of their base.
  for (AttentionImpl* impl : tile_variants())
    std::cout << impl->name() << "\t" << impl->where() << "\t" << impl->description()
              << " (drawn by campaigns and properties for a quarter of the base's cases)\n";
  return 0;
}

// FLASHPROOF_IMPORT=DIR: imported:<backend> registered before the verb runs (docs/exchange.md).
void register_imports_from_environment() {
  const char* root = std::getenv("FLASHPROOF_IMPORT");
  if (root == nullptr || *root == '\0') return;
  try {
    register_imported_implementations(root);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("FLASHPROOF_IMPORT: ") + e.what());
  }
}

int run_verb(Command& command) {
  if (const auto* help = std::get_if<HelpRequest>(&command)) {
    std::cout << help->text;
    return 0;
  }
  register_imports_from_environment();
  return std::visit(
      [](auto& c) -> int {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, ListCommand>) return run_list();
        else if constexpr (std::is_same_v<T, CheckCommand>) return run_check_command(c);
        else if constexpr (std::is_same_v<T, ReplayCommand>) return run_replay_command(c);
        else if constexpr (std::is_same_v<T, ProveCommand>) return run_prove_command(c);
        else if constexpr (std::is_same_v<T, FuzzCommand>) return run_fuzz_command(std::move(c));
        else if constexpr (std::is_same_v<T, ExportCommand>) return run_export_command(c.spec);
        else if constexpr (std::is_same_v<T, ReportCommand>) return report::run_report(c.arguments, std::cout, std::cerr);
        else return 0;  // HelpRequest, printed above
      },
      command);
}

// Every error goes out as one printable line (printable: no line break or control character from
// a file name, a file's content or an option's value reaches the terminal).
int error_line(const std::string& prefix, const std::string& message, int status) {
  std::cerr << prefix << printable(message) << "\n";
  return status;
}

}  // namespace

int run_command_line(const std::vector<std::string>& args) {
  // report's command-line errors have always named the verb.
  std::string prefix = !args.empty() && args[0] == "report" ? "flashproof report: " : "flashproof: ";
  try {
    Command command = parse_command_line(args);
    prefix = "flashproof: ";
    return run_verb(command);
  } catch (const UsageError& e) {
    return error_line(prefix, e.what(), 2);
  } catch (const std::invalid_argument& e) {
    return error_line(prefix, e.what(), 2);
  } catch (const std::bad_alloc&) {
    return error_line(prefix, "out of memory for this case", 2);
  } catch (const std::exception& e) {
    return error_line(prefix, std::string("internal error: ") + e.what(), 3);
  } catch (...) {
    return error_line(prefix, "internal error: an unknown exception", 3);
  }
}

}  // namespace flashproof::cli
