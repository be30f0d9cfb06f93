// What a check of a case costs before it starts, for the limits every front end applies (the
// command's --max-work / --max-memory, cli/case_limits.h; the Python package's max_work /
// max_memory_gib): a case past them is refused with one line instead of running for hours or
// meeting the OOM killer. Estimates in double, so that no product of sizes overflows.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "core/problem.h"

namespace flashproof {

// batch * heads_q * seqlen_q * seqlen_k * head_dim (a packed batch: heads_q * head_dim times the
// sum of its sequences' seqlen_q * seqlen_k), the unit of fuzz's --max-work too: 2^36 is
// minutes of reference time on a few cores.
inline constexpr double kDefaultMaxWork = 68719476736.0;
// Bytes per element of each tensor, every copy the check keeps included (inputs, outputs, the
// naive baseline's, the reference's values, bounds and magnitudes, the rigorous bounds, the
// bound-free envelopes' two doubles per output element, computed for every check): an
// over-estimate (a backward keeps about 240 bytes per position of its eight tensors against the
// 512 counted), so a refused case would not have fitted.
inline constexpr double kCheckBytesPerElement = 64;

struct CaseCost {
  double work = 0;        // multiply-adds, as kDefaultMaxWork counts them
  double memory_gib = 0;  // the check's memory, over-estimated
};

// With a sample (a check's --sample N, harness/sample_plan.h) a forward judges at most about N
// plus the structured rows (counted generously as kStructuredRowsAtMost), each costing seqlen_k *
// head_dim; a backward's key columns need every row's softmax, so its work stays the full one.
inline constexpr double kStructuredRowsAtMost = 1024;
inline CaseCost case_cost(const Problem& p, bool backward, std::int64_t sample = 0) {
  const double b = static_cast<double>(p.batch), d = static_cast<double>(p.head_dim);
  const double rows = b * static_cast<double>(p.heads_q) * static_cast<double>(p.seqlen_q);
  const double judged = sample > 0 && !backward ? std::min(rows, static_cast<double>(sample) + kStructuredRowsAtMost) : rows;
  // A packed batch's rows each pair with their own sequence's keys only.
  double pairs_per_row = static_cast<double>(p.seqlen_k);
  if (p.packed()) {
    double pairs = 0;
    for (std::size_t s = 1; s < p.cu_seqlens_q.size(); ++s)
      pairs += static_cast<double>(p.cu_seqlens_q[s] - p.cu_seqlens_q[s - 1]) *
               static_cast<double>(p.cu_seqlens_k[s] - p.cu_seqlens_k[s - 1]);
    pairs_per_row = judged < rows ? static_cast<double>(p.max_seqlen_k())
                                  : pairs / std::max(1.0, static_cast<double>(p.seqlen_q));
  }
  const double work = judged * pairs_per_row * d;
  const double q_like = b * static_cast<double>(p.seqlen_q) * static_cast<double>(p.heads_q) * d;  // Q, dO, O, dQ
  double kv_like = b * static_cast<double>(p.seqlen_k) * static_cast<double>(p.heads_kv) * d;  // K, V, dK, dV
  if (p.kv_cache()) {  // the logical keys and the cache as handed over (a page pool may be larger); appending,
    double cache = d * static_cast<double>(p.heads_kv);  // the implementation's copy and the expected one too
    for (std::int64_t x : {p.kv_shape()[0], p.kv_shape()[1]}) cache *= static_cast<double>(x);
    kv_like += cache * (p.appends() ? 3 : 1);
  }
  return {work, kCheckBytesPerElement * (q_like * (backward ? 4 : 3) + kv_like * (backward ? 4 : 2)) / (1 << 30)};
}

inline double physical_memory_gib() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / (1 << 30) : 1e9;
}

}  // namespace flashproof
