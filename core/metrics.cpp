#include "core/metrics.h"

#include <algorithm>
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
  const DType ulp_dtype = opt.ulp_dtype.value_or(actual.dtype());
  const bool own_bits = ulp_dtype == actual.dtype();  // a's bits serve for its ULP index

  // std::max, not std::fmax (a libm call per element): the running maxima start at 0 and never
  // take a NaN, so both give the same result.
  ErrorMetrics m;
  m.rel_floor = opt.rel_floor;
  double sum_e2 = 0, sum_r2 = 0;
  // The running maxima and the common count in locals (registers), stored once at the end.
  double max_reference_bound = 0, max_abs = 0, max_rel = 0, max_ulps = 0;
  std::int64_t count = 0, above_bound = 0;
  const Shape& s = actual.shape();
  std::int64_t idx = 0;
  for (std::int64_t i0 = 0; i0 < s[0]; ++i0)
    for (std::int64_t i1 = 0; i1 < s[1]; ++i1)
      for (std::int64_t i2 = 0; i2 < s[2]; ++i2)
        for (std::int64_t i3 = 0; i3 < s[3]; ++i3, ++idx) {
          const auto k = static_cast<std::size_t>(idx);
          if (opt.checked && !(*opt.checked)[k]) continue;
          ++count;
          const std::uint32_t a_bits = actual.bits(i0, i1, i2, i3);
          const double a = from_bits(actual.dtype(), a_bits);
          const double r = (*ref.value)[k];
          const double beta = ref.bound ? (*ref.bound)[k] : 0.0;
          const double* tol = opt.tolerance ? &(*opt.tolerance)[k] : nullptr;
          if (ref.bound) {
            max_reference_bound = std::max(max_reference_bound, std::isnan(beta) ? INFINITY : beta);
            if (tol && !(beta <= opt.loose_fraction * *tol)) ++m.loose_reference;
          }
          if (std::isnan(r)) {
            ++m.nonfinite_reference;
            if (!std::isnan(a)) ++m.nan_mismatch;
            continue;  // no error is known; the harness fails on nonfinite_reference
          }
          bool mismatch = false;
          if (std::isnan(a)) {
            ++m.nan_mismatch;
            mismatch = true;
          } else if ((std::isinf(a) || std::isinf(r)) && a != r) {
            ++m.inf_mismatch;
            mismatch = true;
          }
          if (mismatch) {
            if (m.first_mismatch_index < 0) m.first_mismatch_index = idx;
            if (tol) ++above_bound;
            continue;
          }
          if (std::isinf(a)) continue;  // equal infinities: exact

          const double e = std::fabs(a - r);
          if (e > max_abs || m.worst_index < 0) {
            max_abs = e;
            m.worst_index = idx;
            m.worst_coord = {i0, i1, i2, i3};
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
          const std::int64_t ulps =
              e == 0 ? 0
                     : std::llabs(ordered_index(ulp_dtype, own_bits ? a_bits : to_bits(ulp_dtype, a)) -
                                  ordered_index(ulp_dtype, to_bits(ulp_dtype, r)));
          max_ulps = std::max(max_ulps, static_cast<double>(ulps));
          if (tol && !(e - beta <= *tol)) ++above_bound;
        }
  m.max_reference_bound = max_reference_bound;
  m.max_abs = max_abs;
  m.max_rel = max_rel;
  m.max_ulps = max_ulps;
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
