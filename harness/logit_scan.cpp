#include "harness/logit_scan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/algo/row_keys.h"

namespace flashproof {

LogitScan scan_logits(const Problem& p, const HostTensor& q, const HostTensor& k, double limit) {
  return scan_logits(p, reference::DenseRows(q, p.batch, p.heads_q, p.seqlen_q, p.head_dim, "Q"),
                     reference::DenseRows(k, p.batch, p.heads_kv, p.seqlen_k, p.head_dim, "K"), limit);
}

LogitScan scan_logits(const Problem& p, const reference::DenseRows& qr,
                      const reference::DenseRows& kr, double limit) {
  const algo::RowKeys keys(p);
  const double scale = p.softmax_scale();
  LogitScan out;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        const double* qi = qr.row(b, h, i);
        // The keys of the row's sequence: a kernel computes (and masks) their logits, never others.
        const algo::KeyRange<std::int64_t> all = keys.sequence_keys(i), seen = keys.of_row(i);
        // ALiBi's largest bias of the row, at one end of its sequence's keys: the same limit.
        if (p.alibi() && all.end > all.begin) {
          const double slope = std::fabs(static_cast<double>(p.alibi_slopes[static_cast<std::size_t>(h)]));
          const double far = static_cast<double>(
              std::max(keys.alibi_distance(i, all.begin), keys.alibi_distance(i, all.end - 1)));
          if (slope * far > limit) out.beyond_limit = true;
        }
        for (std::int64_t j = all.begin; j < all.end; ++j) {
          const double* kj = kr.row(b, p.kv_head(h), j);
          double dot = 0;
          for (std::int64_t c = 0; c < p.head_dim; ++c) dot += qi[c] * kj[c];
          const double x = std::fabs(scale * dot);
          if (x > limit) out.beyond_limit = true;
          if (seen.contains(j) && !(x <= out.max_visible))
            out.max_visible = std::isnan(x) ? std::numeric_limits<double>::infinity() : x;
        }
      }
  return out;
}

}  // namespace flashproof
