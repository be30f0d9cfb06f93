#include "bounds/given_o_error.h"

#include <cmath>

#include "core/dtype.h"

namespace flashproof::bounds {

std::vector<double> d_error_of_given_o(const Problem& p, const HostTensor& given, const ExactO& ref,
                                       const HostTensor& dout) {
  const std::int64_t d = p.head_dim;
  const double fp32_sum = (d + 1) * 0x1p-24 / (1 - (d + 1) * 0x1p-24);  // gamma_{d+1}, products exact or not
  std::vector<double> e(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 0.0);
  std::vector<double> o(d), g(d);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h) {
        given.read_row(b, i, h, o.data());
        dout.read_row(b, i, h, g.data());
        const std::size_t at = static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * d);
        double signed_err = 0, ref_part = 0, abs_sum = 0;
        bool finite = true, checked = true;
        for (std::int64_t c = 0; c < d; ++c) {
          finite = finite && std::isfinite(o[c]);
          checked = checked && ref.checked[at + c];
          abs_sum += std::fabs(g[c] * o[c]);
          if (checked) {
            signed_err += g[c] * (o[c] - ref.value[at + c]);
            ref_part += std::fabs(g[c]) * ref.bound[at + c];
          }
        }
        double& row = e[static_cast<std::size_t>((b * p.heads_q + h) * p.seqlen_q + i)];
        if (!finite) continue;
        const double taken = checked ? std::fabs(signed_err) + ref_part : unit_roundoff(p.dtype) * abs_sum;
        // The double evaluation's own rounding is far below the fp32 term (2^-50 of the sums).
        row = (taken + fp32_sum * abs_sum) * (1 + 0x1p-40) + 0x1p-1000 * d;
      }
  return e;
}

}  // namespace flashproof::bounds
