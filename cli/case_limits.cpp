// The options of cli/case_limits.h.
#include "cli/case_limits.h"

#include <string>

#include "cli/value_option.h"

namespace flashproof::cli {

void add_case_limit_options(CLI::App& verb, CaseLimits& limits) {
  const auto positive = [](const std::string& name, const std::string& value) {
    const double v = parse_number<double>(name, value);
    if (!(v > 0) || !(v < 1e300)) throw UsageError(name + " must be a positive number, got '" + value + "'");
    return v;
  };
  add_value_option(verb, "--max-work", "W",
                   "refuse a case of more multiply-adds (batch*heads*seqlen_q*seqlen_k*head_dim; default 6.87e10)",
                   [&limits, positive](const std::string& n, const std::string& v) { limits.max_work = positive(n, v); });
  add_value_option(verb, "--max-memory", "GIB", "refuse a case needing more memory (default: this machine's)",
                   [&limits, positive](const std::string& n, const std::string& v) { limits.max_memory_gib = positive(n, v); });
}

}  // namespace flashproof::cli
