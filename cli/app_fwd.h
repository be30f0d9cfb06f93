// CLI::App, declared for the headers that only take one by reference: <CLI/CLI.hpp> costs about
// 4 s per translation unit, so only the files that declare options (*_options.cpp,
// case_limits.cpp, command_line.cpp) include it.
#pragma once

namespace CLI {
class App;
}  // namespace CLI
