// How check and replay print a record: the table, or JSON with --json.
#pragma once

#include <iostream>

#include "harness/check.h"
#include "harness/check_render.h"

namespace flashproof::cli {

// Exit status 1 for a failed check, 0 for pass or out-of-domain.
inline int print_check_record(const CheckRecord& r, bool json) {
  std::cout << (json ? to_json(r) : to_table(r));
  return r.verdict == Verdict::fail ? 1 : 0;
}

}  // namespace flashproof::cli
