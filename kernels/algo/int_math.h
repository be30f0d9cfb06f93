// Integer division rounded toward -inf and +inf for a positive divisor. C++ '/' truncates toward
// zero while Z3's integer div rounds toward -inf; both agree on a non-negative numerator, so the
// division is only ever applied to one and the two instantiations have the same meaning.
#pragma once

#include "kernels/algo/domain.h"

namespace flashproof::algo {

template <class Int>
FP_HOST_DEVICE Int floor_div(Int a, Int b) {
  using D = Domain<Int>;
  const Int one = D::lit(1, a);
  // For a < 0 the numerator -a + b - 1 is positive; for a >= 0 it is a itself.
  return D::select(a >= 0, a / b, -((-a + b - one) / b));
}

template <class Int>
FP_HOST_DEVICE Int ceil_div(Int a, Int b) {
  return floor_div(a + b - Domain<Int>::lit(1, a), b);
}

}  // namespace flashproof::algo
