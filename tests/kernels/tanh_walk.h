// What the bounds assume of the soft cap's tanh (docs/error-bounds.md "Score modification": tanhf
// within 2 ulps, taken as 2^-22 relative, a result below 2^-126 may flush) and what the proofs
// assume of it (docs/proofs.md, theorem 8: within [-1, 1], odd, monotone), checked on one input x
// >= 0, its negation and its successor. Shared by the host's strided walk (test_tanh_axioms.cpp) and
// the GPU's exhaustive one (gpu/test_tanh_gpu.cu), so both judge alike.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace flashproof::tests::tanh_walk {

// +0, +min subnormal, ..., +max, +inf: the non-negative inputs; oddness covers the negative ones.
inline constexpr std::uint64_t kCount = std::uint64_t{0x7F800001};

enum Violation : unsigned {
  kNaN = 1,         // tanh of a non-NaN input is NaN
  kOutside = 2,     // |tanh(x)| > 1
  kInaccurate = 4,  // |tanh(x) - exact| > 2^-22 |exact| + 2^-126
  kNotOdd = 8,      // tanh(-x) != -tanh(x)
  kDecreasing = 16, // tanh(next input) < tanh(x)
};
inline constexpr int kViolationKinds = 5;

// y = tanh(x), y_neg = tanh(-x), y_next = tanh of the next input (ignored for the last), exact =
// tanh(x) in double (within 2^-50 of it: far inside the 2^-22 judged).
FP_HOST_DEVICE inline unsigned violations(std::uint64_t k, float y, float y_neg, float y_next, double exact) {
  unsigned v = 0;
  if (y != y || y_neg != y_neg) v |= kNaN;
  if (y > 1.0f || y < -1.0f || y_neg > 1.0f || y_neg < -1.0f) v |= kOutside;
  const double err = static_cast<double>(y) - exact;
  if (!((err < 0 ? -err : err) <= 0x1p-22 * (exact < 0 ? -exact : exact) + 0x1p-126)) v |= kInaccurate;
  if (!(y_neg == -y)) v |= kNotOdd;
  if (k + 1 < kCount && !(y <= y_next)) v |= kDecreasing;
  return v;
}

inline const char* violation_name(int kind) {
  static const char* names[kViolationKinds] = {"NaN", "outside [-1, 1]", "beyond 2^-22 relative (+ 2^-126)",
                                               "not odd", "decreasing"};
  return names[kind];
}

}  // namespace flashproof::tests::tanh_walk
