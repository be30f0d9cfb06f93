#include "cli/check_command.h"

#include "cli/check_record_output.h"
#include "harness/case_file.h"

namespace flashproof::cli {

int run_check_command(const CheckCommand& command) {
  check_case_limits(command.c.problem, command.c.backward, command.limits, command.options.reference.sample);
  // Saved before the run, so a case whose implementation crashes is kept as well.
  if (!command.save_case.empty()) write_case_file(command.save_case, command.c, command.options);
  return print_check_record(run_check(command.c, command.options), command.json, command.require_judged);
}

}  // namespace flashproof::cli
