// How check and replay print a record: the table, or JSON with --json.
#pragma once

#include <iostream>

#include "harness/check.h"
#include "harness/check_render.h"

namespace flashproof::cli {

// Exit status 1 for a failed check, 5 for one failed by the second tier's baseline rule alone; with
// require_judged (--require-judged), 4 for a not-judged one (docs/spec.md "The command line"); else
// 0 (pass, pass (baseline rule), out-of-domain, not-judged).
inline constexpr int kExitNotJudged = 4, kExitBaselineRuleFail = 5;
inline int print_check_record(const CheckRecord& r, bool json, bool require_judged) {
  std::cout << (json ? to_json(r) : to_table(r));
  if (r.verdict == Verdict::fail) return 1;
  if (r.verdict == Verdict::fail_baseline_rule) return kExitBaselineRuleFail;
  return require_judged && r.verdict == Verdict::not_judged ? kExitNotJudged : 0;
}

}  // namespace flashproof::cli
