#include "cli/replay_command.h"

#include <iostream>
#include <memory>

#include "cli/check_record_output.h"
#include "cli/option_values.h"
#include "core/json.h"
#include "harness/case_file.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"
#include "properties/properties.h"

namespace flashproof::cli {
namespace {

// A case file saved by a failing property: the property again on the same case. Exit 0 when it
// holds now, 1 when it fails.
int replay_property(const CaseFile& cf, AttentionImpl& impl, bool json) {
  const properties::Property* property = properties::find_property(cf.property);
  if (!property) throw UsageError("unknown property '" + cf.property + "' in the case file");
  if (const std::string e = refusal(impl, cf.c.problem, cf.c.backward); !e.empty())
    throw UsageError(impl.name() + " does not support this case: " + e);
  const properties::Outcome o = property->check(impl, cf.c);
  if (json) {
    const json::Value outcome = {{"property", cf.property}, {"impl", impl.name()}, {"holds", o.holds}, {"why", o.why}};
    std::cout << json::write(outcome) << "\n";
  } else {
    std::cout << "property: " << cf.property << " (" << property->what << ")\n"
              << "implementation: " << impl.name() << " (" << impl.where() << ")\n"
              << "verdict: " << (o.holds ? "holds" : "fails: " + o.why) << "\n";
  }
  return o.holds ? 0 : 1;
}

}  // namespace

int run_replay_command(const ReplayCommand& command) {
  CaseFile cf = read_case_file(command.file);
  cf.options.reference.threads = command.threads;
  check_case_limits(cf.c.problem, cf.c.backward, command.limits, cf.options.reference.sample);
  // The deliberately flawed baselines of the property suite are not registered; their failures'
  // case files name them.
  std::unique_ptr<AttentionImpl> flawed = make_flawed_naive(cf.c.impl);
  AttentionImpl* impl = flawed ? flawed.get() : find_implementation(cf.c.impl);
  // A Python callable lives only in its user's program: say how to re-run the case there.
  if (!impl && cf.c.impl.rfind("python:", 0) == 0)
    throw UsageError("case file " + command.file + ": " + cf.c.impl +
                     " is a Python callable, which the command cannot load; re-run it in Python: "
                     "flashproof.replay(<your forward>, " + json::write(json::Value(command.file)) +
                     (cf.c.backward ? ", backward=<your backward>)" : ")"));
  if (!impl)
    throw UsageError("case file " + command.file + ": unknown implementation '" + cf.c.impl + "' (see `flashproof list`)");
  if (!command.json) {
    std::cout << "case file: " << printable(command.file) << "\n";
    if (!cf.note.empty()) std::cout << "note: " << printable(cf.note) << "\n";
  }
  if (!cf.property.empty()) return replay_property(cf, *impl, command.json);
  return print_check_record(run_check(cf.c, *impl, cf.options), command.json, command.require_judged);
}

}  // namespace flashproof::cli
