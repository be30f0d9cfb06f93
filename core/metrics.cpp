#include "core/metrics.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace flashproof {
namespace {

void check_length(const std::vector<double>* v, std::int64_t n, const char* what) {
  if (v && static_cast<std::int64_t>(v->size()) != n)
    throw std::invalid_argument(std::string("compare: ") + what + " has " +
                                std::to_string(v->size()) + " elements, the tensor " +
                                std::to_string(n));
}

// An upper bound on the ULP distance of finite a and r in dtype t, from their double bit patterns,
// cheap enough to run on every element, so that the exact distance (a correctly rounded
// conversion of r) is only computed where it may raise the maximum. Over t's normal range a
// double's bits are an affine function of its index in t, with slope 2^(52 - mant) (both formats
// have the same binades), and inf takes the index the next binade would have. Below the normal
// range t's spacing stays fixed while the double's keeps halving, and across zero the sign bit
// lies between the two, so there the bits only grow faster. Rounding to nearest moves r (and a,
// when t is narrower than a's dtype) by at most half a step of t, so the distance is at most
// |bits(a) - bits(r)| / 2^(52 - mant) + 1, an integer below the shifted difference + 2.
std::uint64_t ulp_bound(double a, double r, int shift) {
  const auto ba = std::bit_cast<std::uint64_t>(a), br = std::bit_cast<std::uint64_t>(r);
  return ((ba > br ? ba - br : br - ba) >> shift) + 1;
}

}  // namespace

ErrorMetrics compare(const HostTensor& actual, const ReferenceView& ref,
                     const CompareOptions& opt) {
  const std::int64_t n = actual.numel();
  if (!ref.value) throw std::invalid_argument("compare: no reference values");
  check_length(ref.value, n, "the reference");
  check_length(ref.bound, n, "the reference bound");
  check_length(opt.tolerance, n, "the tolerance");
  if (opt.checked && static_cast<std::int64_t>(opt.checked->size()) != n)
    throw std::invalid_argument("compare: the checked mask has " +
                                std::to_string(opt.checked->size()) + " elements, the tensor " +
                                std::to_string(n));
  if (opt.tolerance && opt.uniform_tolerance)
    throw std::invalid_argument("compare: both a per-element and a uniform tolerance");
  const DType dt = actual.dtype();
  const DType ulp_dtype = opt.ulp_dtype.value_or(dt);
  const bool own_bits = ulp_dtype == dt;  // a's bits serve for its ULP index
  const int ulp_shift = 52 - dtype_mantissa_bits(ulp_dtype);
  // Where |r| is normal in ulp_dtype and beta <= 2^-(mant + 4) |r|, [r - beta, r + beta] is shorter
  // than half a step of ulp_dtype there, so it rounds to at most two neighbours: settled at once.
  const double settled_fraction = std::ldexp(1.0, -(dtype_mantissa_bits(ulp_dtype) + 4));
  const double smallest_normal = from_bits(ulp_dtype, 1u << dtype_mantissa_bits(ulp_dtype));
  std::int64_t ulps_unknown = 0;
  const bool has_tol = opt.tolerance || opt.uniform_tolerance;
  const double uniform_tol = opt.uniform_tolerance.value_or(0);
  const double* tols = opt.tolerance ? opt.tolerance->data() : nullptr;
  const double* values = ref.value->data();
  const double* bounds = ref.bound ? ref.bound->data() : nullptr;
  const std::uint8_t* checked = opt.checked ? opt.checked->data() : nullptr;

  // std::max, not std::fmax (a libm call per element): the running maxima start at 0 and never
  // take a NaN, so both give the same result.
  ErrorMetrics m;
  m.rel_floor = opt.rel_floor;
  double sum_e2 = 0, sum_r2 = 0;
  // The running maxima and the common count in locals (registers), stored once at the end.
  double max_reference_bound = 0, max_abs = 0, max_rel = 0, max_ulps = 0;
  std::int64_t count = 0, above_bound = 0, worst = -1;
  // The loop is instantiated per dtype (with_dtype), so decoding a's bits takes fixed shifts.
  with_dtype(dt, [&](auto dt_const) {
    actual.for_each_bits([&](std::size_t k, std::uint32_t a_bits) {
      if (checked && !checked[k]) return;
      ++count;
      const double a = from_bits(dt_const, a_bits);
      const double r = values[k];
      const double beta = bounds ? bounds[k] : 0.0;
      const double tol = tols ? tols[k] : uniform_tol;
      if (bounds) {
        max_reference_bound = std::max(max_reference_bound, std::isnan(beta) ? INFINITY : beta);
        if (has_tol && !(beta <= opt.loose_fraction * tol)) ++m.loose_reference;
      }
      if (!(std::isfinite(a) && std::isfinite(r))) [[unlikely]] {
        const auto first = [&](std::int64_t& index) {
          if (index < 0) index = static_cast<std::int64_t>(k);
        };
        if (std::isnan(r)) {
          ++m.nonfinite_reference;
          if (!std::isnan(a)) ++m.nan_mismatch, first(m.first_nan_index);
          return;  // no error is known; the harness fails on nonfinite_reference
        }
        if (std::isnan(a) || a != r) {  // NaN, or inf against finite or the other inf
          ++(std::isnan(a) ? m.nan_mismatch : m.inf_mismatch);
          first(std::isnan(a) ? m.first_nan_index : m.first_inf_index);
          if (m.first_mismatch_index < 0) m.first_mismatch_index = static_cast<std::int64_t>(k);
          if (has_tol) ++above_bound;
        }
        return;  // a mismatch, or equal infinities (exact)
      }

      const double e = std::fabs(a - r);
      if (e > max_abs || worst < 0) {
        max_abs = e;
        worst = static_cast<std::int64_t>(k);
        m.worst_value = a;
        m.worst_reference = r;
      }
      const double denom = std::max(std::fabs(r), opt.rel_floor);
      // Divide only where e / denom may exceed the maximum so far (the margin covers the
      // product's rounding, so the result is the same as dividing everywhere).
      if (!(e < max_rel * denom * (1 - 0x1p-50))) {
        const double rel = denom > 0 ? e / denom : (e > 0 ? INFINITY : 0.0);
        max_rel = std::max(max_rel, rel);
      }
      sum_e2 += e * e;
      sum_r2 += r * r;
      // ULPs against the correctly rounded exact value, which lies in [round(r - beta), round(r +
      // beta)]: the distance from a to that range. Where the range spans more than two neighbours
      // the exact value's rounding is not known and no ULP count is meaningful (ulps_unknown).
      const auto index = [&](double x) { return ordered_index(ulp_dtype, to_bits(ulp_dtype, x)); };
      const bool quick = beta == 0 || (std::fabs(r) >= smallest_normal && beta <= settled_fraction * std::fabs(r));
      if (!quick && index(r + beta) - index(r - beta) > 1) {
        ++ulps_unknown;
      } else if (e != 0 && static_cast<double>(ulp_bound(a, r, ulp_shift)) > max_ulps) {
        // The exact distance only where the gate cannot rule out a new maximum.
        const std::int64_t at = ordered_index(ulp_dtype, own_bits ? a_bits : to_bits(ulp_dtype, a));
        const std::int64_t lo = index(r - beta), hi = index(r + beta);
        const std::int64_t ulps = at < lo ? lo - at : at > hi ? at - hi : 0;
        max_ulps = std::max(max_ulps, static_cast<double>(ulps));
      }
      if (has_tol && !(e - beta <= tol)) ++above_bound;
    });
  });
  if (worst >= 0) {
    m.worst_index = worst;
    const Shape& s = actual.shape();
    m.worst_coord = {worst / (s[1] * s[2] * s[3]), worst / (s[2] * s[3]) % s[1], worst / s[3] % s[2], worst % s[3]};
  }
  m.max_reference_bound = max_reference_bound;
  m.max_abs = max_abs;
  m.max_rel = max_rel;
  m.max_ulps = max_ulps;
  m.ulps_unknown = ulps_unknown;
  m.count = count;
  m.above_bound = above_bound;
  if (sum_r2 > 0)
    m.normwise_rel = std::sqrt(sum_e2) / std::sqrt(sum_r2);
  else
    m.normwise_rel = sum_e2 > 0 ? std::sqrt(sum_e2) / std::fmax(opt.rel_floor, DBL_MIN) : 0.0;
  return m;
}

std::string format_metrics(const ErrorMetrics& m) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "n=%lld max_abs=%.6g max_rel=%.6g (floor %.3g) normwise=%.6g max_ulps=%.0f "
                "worst=#%lld[%lld,%lld,%lld,%lld] actual=%.9g ref=%.9g nan_mismatch=%lld "
                "inf_mismatch=%lld nan_ref=%lld above_bound=%lld",
                static_cast<long long>(m.count), m.max_abs, m.max_rel, m.rel_floor,
                m.normwise_rel, m.max_ulps, static_cast<long long>(m.worst_index),
                static_cast<long long>(m.worst_coord[0]), static_cast<long long>(m.worst_coord[1]),
                static_cast<long long>(m.worst_coord[2]), static_cast<long long>(m.worst_coord[3]),
                m.worst_value, m.worst_reference, static_cast<long long>(m.nan_mismatch),
                static_cast<long long>(m.inf_mismatch),
                static_cast<long long>(m.nonfinite_reference),
                static_cast<long long>(m.above_bound));
  return buf;
}

}  // namespace flashproof
