// What a check may cost before it starts (docs/bad-input.md): a case past --max-work or
// --max-memory is refused with one line (exit 2) instead of running for hours or meeting the OOM
// killer. Estimates in double, so that no product of sizes overflows.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli/args.h"
#include "core/problem.h"

namespace flashproof::cli {

// batch * heads_q * seqlen_q * seqlen_k * head_dim, the unit of fuzz's --max-work too: 2^36 is
// minutes of reference time on a few cores.
inline constexpr double kDefaultMaxWork = 68719476736.0;
// Bytes per element of each tensor, every copy the check keeps included (inputs, outputs, the
// naive baseline's, the reference's values, bounds and magnitudes, the rigorous bounds): an
// over-estimate, so a refused case would not have fitted.
inline constexpr double kBytesPerElement = 64;

struct CaseLimits {
  double max_work = kDefaultMaxWork;
  double max_memory_gib = 0;  // 0: this machine's physical memory
};

inline double physical_memory_gib() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / (1 << 30) : 1e9;
}

// Throws UsageError (one line) when the case exceeds a limit.
inline void check_case_limits(const Problem& p, bool backward, const CaseLimits& limits) {
  const double b = static_cast<double>(p.batch), d = static_cast<double>(p.head_dim);
  const double work = b * static_cast<double>(p.heads_q) * static_cast<double>(p.seqlen_q) *
                      static_cast<double>(p.seqlen_k) * d;
  const double q_like = b * static_cast<double>(p.seqlen_q) * static_cast<double>(p.heads_q) * d;  // Q, dO, O, dQ
  const double kv_like = b * static_cast<double>(p.seqlen_k) * static_cast<double>(p.heads_kv) * d;  // K, V, dK, dV
  const double gib = kBytesPerElement * (q_like * (backward ? 4 : 3) + kv_like * (backward ? 4 : 2)) / (1 << 30);
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

// The value of --max-work W or --max-memory GIB.
inline void parse_case_limit(std::string_view name, std::string_view value, CaseLimits& limits) {
  const double v = parse_number<double>(name, value);
  if (!(v > 0) || !(v < 1e300)) throw UsageError(std::string(name) + " must be a positive number, got '" + std::string(value) + "'");
  (name == "--max-work" ? limits.max_work : limits.max_memory_gib) = v;
}

}  // namespace flashproof::cli
