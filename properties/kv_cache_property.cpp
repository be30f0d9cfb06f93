// KV caches as a property (docs/spec.md "KV caches"): the case's batch made a paged cache, its
// sequences' used lengths drawn from its seed, read through a table of pages in order and through a
// shuffled one over a pool with unused (NaN) pages. The logical sequences are the same, so every
// output is bitwise the same whatever pages hold them, and the differential verdict holds.
#include <cstdint>
#include <string>

#include "core/kv_cache.h"
#include "core/rng.h"
#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {
namespace {

// c's problem as a paged KV cache of one page more than its keys per sequence, with the given
// table's shuffle seed (0: pages in order) and two spare pages.
Case as_paged_cache(const Case& c, std::uint64_t shuffle) {
  Case k = c;
  Problem& p = k.problem;
  Rng r(derive(c.seed, 0x6b76));
  p.page_size = std::int64_t{16} << r.below(3);
  const std::int64_t per_sequence = (p.seqlen_k + p.page_size - 1) / p.page_size + 1;
  p.cache_seqlens.clear();
  for (std::int64_t b = 0; b < p.batch; ++b)  // the full length, a third of it, or any, each sequence
    p.cache_seqlens.push_back(r.below(3) == 0 ? p.seqlen_k : static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(p.seqlen_k) + 1)));
  p.seqlen_k = per_sequence * p.page_size;
  p.num_pages = p.batch * per_sequence + 2;
  p.block_table = page_table(p.batch, per_sequence, p.num_pages, shuffle);
  k.backward = false;
  return k;
}

}  // namespace

Outcome page_order_invariance(AttentionImpl& impl, const Case& c) {
  if (c.problem.packed() || c.problem.kv_cache()) return holds_with("not a dense batch");
  const Case in_order = as_paged_cache(c, 0), shuffled = as_paged_cache(c, derive(c.seed, 0x7061) | 1);
  if (!in_order.problem.validate().empty()) return holds_with("too large for a paged cache");
  if (!refusal(impl, in_order.problem, false).empty()) return holds_with("paged cache not supported here");
  Outcome d = differential(impl, shuffled);
  if (!d.holds) {
    d.why = shuffled.problem.describe() + ": " + d.why;
    return d;
  }
  const ValidProblem logical(logical_problem(in_order.problem));
  const Outputs x = run_implementation(impl, logical, false, inputs_of(in_order));
  const Outputs y = run_implementation(impl, logical, false, inputs_of(shuffled));
  if (std::string w = bitwise_mismatch("O", y.o, x.o); !w.empty()) return fail("shuffled pages vs pages in order: " + w);
  if (std::string w = bitwise_mismatch("LSE", y.lse, x.lse); !w.empty()) return fail("shuffled pages vs pages in order: " + w);
  return d;
}

}  // namespace flashproof::properties::checks
