// The command's limits on what a check may cost (docs/bad-input.md; the estimate:
// harness/case_cost.h): a case past --max-work or --max-memory is refused with one line (exit 2).
#pragma once

#include <cstdio>
#include <string>

#include "cli/app_fwd.h"
#include "cli/option_values.h"
#include "core/problem.h"
#include "harness/case_cost.h"

namespace flashproof::cli {

struct CaseLimits {
  double max_work = kDefaultMaxWork;
  double max_memory_gib = 0;  // 0: this machine's physical memory
};

// Throws UsageError (one line) when the case exceeds a limit.
inline void check_case_limits(const Problem& p, bool backward, const CaseLimits& limits, std::int64_t sample = 0) {
  const auto [work, gib] = case_cost(p, backward, sample);
  const double max_gib = limits.max_memory_gib > 0 ? limits.max_memory_gib : physical_memory_gib();
  char line[320];
  if (work > limits.max_work) {
    std::snprintf(line, sizeof line,
                  "the case needs %.3g multiply-adds (batch*heads*seqlen_q*seqlen_k*head_dim), more than "
                  "--max-work %.3g; raise --max-work to run it",
                  work, limits.max_work);
    throw UsageError(line);
  }
  if (gib > max_gib) {
    std::snprintf(line, sizeof line,
                  "the case needs about %.3g GiB, more than --max-memory %.3g GiB (%s); raise --max-memory to run it",
                  gib, max_gib, limits.max_memory_gib > 0 ? "given" : "this machine's memory");
    throw UsageError(line);
  }
}

// Declares --max-work W and --max-memory GIB on `verb` (case_limits.cpp).
void add_case_limit_options(CLI::App& verb, CaseLimits& limits);

}  // namespace flashproof::cli
