// The exact results the mask implies: rows that see no key and keys that no row sees.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/algo/mask.h"
#include "properties/check_support.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {

// A row that sees no key has O = 0, LSE = +inf and dQ = 0; a key no row sees has dK = dV = 0.
Outcome empty_rows(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const algo::WindowMask<std::int64_t> mask{p.mask_offset(), p.window_left, p.window_right};
  std::vector<char> row_sees(static_cast<std::size_t>(p.seqlen_q), 0), key_seen(static_cast<std::size_t>(p.seqlen_k), 0);
  for (std::int64_t i = 0; i < p.seqlen_q; ++i)
    for (std::int64_t j = 0; j < p.seqlen_k; ++j)
      if (mask.visible(i, j)) row_sees[static_cast<std::size_t>(i)] = key_seen[static_cast<std::size_t>(j)] = 1;
  const bool any_empty = std::find(row_sees.begin(), row_sees.end(), 0) != row_sees.end();
  const bool any_unseen = std::find(key_seen.begin(), key_seen.end(), 0) != key_seen.end();
  if (!any_empty && !any_unseen) return holds_with("vacuous (no empty row or unseen key)");
  const Outputs out = run_implementation(impl, p, c.backward, inputs_of(c));
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        if (row_sees[static_cast<std::size_t>(i)]) continue;
        if (out.lse.get(b, h, i) != std::numeric_limits<double>::infinity())
          return fail("LSE of empty row " + std::to_string(i) + " is " + std::to_string(out.lse.get(b, h, i)) + ", not +inf");
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          if (out.o.get(b, i, h, d) != 0) return fail("O of empty row " + std::to_string(i) + " is not 0");
          if (c.backward && out.dq.get(b, i, h, d) != 0) return fail("dQ of empty row " + std::to_string(i) + " is not 0");
        }
      }
  if (c.backward)
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads_kv; ++h)
        for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
          if (key_seen[static_cast<std::size_t>(j)]) continue;
          for (std::int64_t d = 0; d < p.head_dim; ++d)
            if (out.dk.get(b, j, h, d) != 0 || out.dv.get(b, j, h, d) != 0)
              return fail("dK/dV of key " + std::to_string(j) + ", which no row sees, is not 0");
        }
  return holds_with(any_empty ? "has empty rows" : "has unseen keys");
}

}  // namespace flashproof::properties::checks
