// Error metrics of one output tensor against a reference.
//
// Elements are addressed by their linear logical index ((i0 * n1 + i1) * n2 + i2) * n3 + i3 over
// the tensor's shape (unused dimensions have size 1), whatever its strides. For each compared
// element, with a = actual value and r = reference value:
//   r NaN                  nonfinite_reference += 1 (a harness must fail: the reference is
//                          unusable); also nan_mismatch += 1 when a is not NaN.
//   a NaN, r not NaN       nan_mismatch += 1.
//   a or r infinite        equal infinities agree (0 error, 0 ulps); otherwise inf_mismatch += 1
//                          (inf vs finite, finite vs inf, or opposite signs).
//   both finite            e = |a - r| enters max_abs, max_rel, normwise_rel and max_ulps.
// Mismatches are excluded from the finite metrics but counted, and they count as above_bound
// (infinite error) whenever a tolerance is given, so they can never pass as small errors.
//   max_rel      max e / max(|r|, rel_floor); 0/0 is 0 and e/0 is inf.
//   normwise_rel sqrt(sum e^2) / sqrt(sum r^2) over finite pairs; when sum r^2 = 0 the
//                denominator is max(rel_floor, DBL_MIN) (0 when sum e^2 is 0 too).
//   max_ulps     the distance in ulp_dtype steps between a (rounded to ulp_dtype if it is wider)
//                and the correctly rounded exact value, which lies between round(r - bound) and
//                round(r + bound): the distance to that range (0 inside it; +0 and -0 are 0 ulps
//                apart). Only where that range holds at most two neighbours; elsewhere the
//                reference does not settle the rounding, no ULP count means anything, and the
//                element is counted in ulps_unknown instead (never where no bound is given).
//   above_bound  elements with e - reference_bound > tolerance (only when a tolerance is given):
//                certainly wrong even if the reference is off by its whole bound.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace flashproof {

// Dense row-major reference over the tensor's logical shape (length numel()).
struct ReferenceView {
  const std::vector<double>* value = nullptr;  // required
  const std::vector<double>* bound = nullptr;  // optional absolute error bound of each value
};

struct CompareOptions {
  double rel_floor = 0;            // floor of the denominator of relative errors
  std::optional<DType> ulp_dtype{};  // dtype of ULP distances; default: the actual tensor's dtype
  // Optional, length numel(): per-element absolute tolerance (counts above_bound) ...
  const std::vector<double>* tolerance = nullptr;
  // ... or one absolute tolerance for every element (not both).
  std::optional<double> uniform_tolerance{};
  // ... and which elements to compare (non-zero = compared), e.g. sampled rows. Null: all.
  const std::vector<std::uint8_t>* checked = nullptr;
  // An element's reference is "loose" when its bound exceeds this fraction of its tolerance.
  double loose_fraction = 0.125;
};

struct ErrorMetrics {
  double max_abs = 0;
  double max_rel = 0;
  double rel_floor = 0;  // the floor used
  double normwise_rel = 0;
  double max_ulps = 0;
  std::int64_t ulps_unknown = 0;  // finite pairs left out of max_ulps (see above)
  std::int64_t nan_mismatch = 0;
  std::int64_t inf_mismatch = 0;
  std::int64_t first_mismatch_index = -1;  // linear index of the first NaN/inf mismatch
  std::int64_t first_nan_index = -1;       // ... of the first NaN mismatch (in nan_mismatch)
  std::int64_t first_inf_index = -1;       // ... of the first inf mismatch (in inf_mismatch)
  std::int64_t worst_index = -1;           // linear index of the (first) max-abs finite pair
  std::array<std::int64_t, 4> worst_coord{-1, -1, -1, -1};
  double worst_value = 0, worst_reference = 0;
  std::int64_t count = 0;                // elements compared
  std::int64_t nonfinite_reference = 0;  // NaN reference values (inf is legitimate, e.g. LSE)
  std::int64_t above_bound = 0;
  double max_reference_bound = 0;    // over compared elements, when bounds are given
  std::int64_t loose_reference = 0;  // compared elements whose reference bound is too loose
};

// Throws std::invalid_argument when the reference, bound, tolerance or mask length differs from
// actual.numel(), the reference is missing or both kinds of tolerance are given.
ErrorMetrics compare(const HostTensor& actual, const ReferenceView& ref,
                     const CompareOptions& options = {});

// One line, e.g. "n=40 max_abs=0.00048828 max_rel=0.00097 (floor 1e-06) normwise=0.0003 ...".
std::string format_metrics(const ErrorMetrics& m);

}  // namespace flashproof
