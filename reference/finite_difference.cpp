#include "reference/finite_difference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "kernels/algo/mask.h"
#include "reference/instantiations.h"

namespace flashproof::reference {
namespace {

// L = sum(O * dO) at the MPFR precision in scope, O from the MPFR engine, with a bound on
// |L - exact L|: the engine's bound on each O element times |dO|, plus the rounding of the
// products and of the sum (gamma_2N of their magnitude); the double sums of the bound are covered
// by the final 2^-20.
struct Loss {
  MpfrReal value;
  double error;
};
Loss loss(const DenseInputs& in, const MpfrPrecision& precision) {
  EngineOutput<MpfrReal> out;
  allocate(in.p, false, out);
  const Problem& p = in.p;
  run_forward<MpfrReal>(in, precision.model(),
                        std::vector<std::uint8_t>(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 1), out, 1,
                        Mutation::none);
  MpfrReal sum = 0;
  double error = 0, magnitude = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const auto x = static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + d);
          const double dout = in.dout.row(b, h, i)[d];
          const MpfrReal term = out.o[x] * MpfrReal(dout);
          sum += term;
          error += out.o_err[x] * std::fabs(dout);
          magnitude += std::fabs(static_cast<double>(term));
        }
  const double terms = static_cast<double>(out.o.size());
  return {sum, (error + gamma_n(2 * terms + 2, precision.model().u) * magnitude) * (1 + 0x1p-20)};
}

// The smallest and largest of values computed in double, each within `slack` of its exact value:
// an upper bound on the exact values' range.
struct Range {
  double low = std::numeric_limits<double>::infinity(), high = -std::numeric_limits<double>::infinity(), slack = 0;
  void add(double x, double error) {
    low = std::min(low, x);
    high = std::max(high, x);
    slack = std::max(slack, error);
  }
  double upper() const { return ((high - low) + 2 * slack) * (1 + 0x1p-50); }
};

// x . y in double and a bound on its rounding error (gamma_d of sum |x_c y_c|).
struct Dot {
  double value = 0, error = 0;
};
Dot dot(const double* x, const double* y, std::int64_t n) {
  double s = 0, a = 0;
  for (std::int64_t c = 0; c < n; ++c) {
    s += x[c] * y[c];
    a += std::fabs(x[c] * y[c]);
  }
  return {s, gamma_n(static_cast<double>(n) + 2, 0x1p-53) * a};
}

}  // namespace

double difference_truncation_bound(const DenseInputs& base, DenseRows DenseInputs::*rows, const std::vector<double>& dir,
                                   double h) {
  if (rows == &DenseInputs::v) return 0;
  if (rows != &DenseInputs::q && rows != &DenseInputs::k)
    throw std::invalid_argument("difference_truncation_bound: the direction must be along Q, K or V");
  if (base.dout.data.empty()) throw std::invalid_argument("difference_truncation_bound: the loss needs dO");
  const Problem& p = base.p;
  const bool along_q = rows == &DenseInputs::q;
  DenseRows u = base.*rows;
  if (dir.size() != u.data.size()) throw std::invalid_argument("difference_truncation_bound: direction of the wrong size");
  u.data = dir;
  const double scale = p.softmax_scale();
  const algo::WindowMask<std::int64_t> mask{p.mask_offset(), p.window_left, p.window_right};
  double sum = 0;  // sum over rows of R_w R_a^3
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t hq = 0; hq < p.heads_q; ++hq) {
      const std::int64_t hkv = p.kv_head(hq);
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        Range w, a;
        for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
          if (!mask.visible(i, j)) continue;
          const Dot wj = dot(base.dout.row(b, hq, i), base.v.row(b, hkv, j), p.head_dim);
          const Dot aj = along_q ? dot(u.row(b, hq, i), base.k.row(b, hkv, j), p.head_dim)
                                 : dot(base.q.row(b, hq, i), u.row(b, hkv, j), p.head_dim);
          w.add(wj.value, wj.error);
          // scale * a rounds once more: its error is within 2^-53 of |scale a| <= |scale| (|a| + error).
          const double scaled = scale * aj.value;
          a.add(scaled, std::fabs(scale) * (aj.error * (1 + 0x1p-52) + 0x1p-53 * (std::fabs(aj.value) + aj.error)));
        }
        if (w.low > w.high) continue;  // a row that sees no key: O = 0 whatever t
        const double ra = a.upper();
        sum += w.upper() * ra * ra * ra;
      }
    }
  // Each row's term rounds 3 times, the sum over rows once per row, the constants 4 times.
  const double query_rows = static_cast<double>(p.batch * p.heads_q * p.seqlen_q);
  return h * h / 6 * 0.625 * sum * (1 + gamma_n(query_rows + 8, 0x1p-53));
}

CentralDifference central_difference(const DenseInputs& base, DenseRows DenseInputs::*rows, const std::vector<double>& dir,
                                     double h, unsigned bits) {
  const MpfrPrecision precision(bits);
  const Loss plus = loss(perturbed(base, rows, dir, h), precision);
  const Loss minus = loss(perturbed(base, rows, dir, -h), precision);
  const double value = static_cast<double>((plus.value - minus.value) / MpfrReal(2 * h));
  // The subtraction and the division round at `bits`, the conversion to double once more.
  const double rounding = (4 * precision.model().u + 0x1p-53) * std::fabs(value);
  return {value, ((plus.error + minus.error) / (2 * h) + rounding) * (1 + 0x1p-20),
          difference_truncation_bound(base, rows, dir, h)};
}

}  // namespace flashproof::reference
