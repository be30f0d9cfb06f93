// How check and replay print a record: the table, or JSON with --json.
#pragma once

#include <iostream>

#include "harness/check.h"
#include "harness/check_render.h"

namespace flashproof::cli {

// Exit status 1 for a failed check; with require_judged (--require-judged), 4 for a not-judged one
// (docs/spec.md "The command line"); else 0 (pass, out-of-domain, not-judged).
inline constexpr int kExitNotJudged = 4;
inline int print_check_record(const CheckRecord& r, bool json, bool require_judged) {
  std::cout << (json ? to_json(r) : to_table(r));
  if (r.verdict == Verdict::fail) return 1;
  return require_judged && r.verdict == Verdict::not_judged ? kExitNotJudged : 0;
}

}  // namespace flashproof::cli
