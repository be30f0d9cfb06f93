// The flashproof command (docs/usage.md): cli/entry.h's run_command_line on the arguments.
#include <iostream>
#include <string>
#include <vector>

#include "cli/entry.h"

int main(int argc, char** argv) {
  const int status = flashproof::cli::run_command_line(std::vector<std::string>(argv + 1, argv + argc));
  std::cout.flush();
  return status;
}
