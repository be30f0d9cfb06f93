#include "bounds/arithmetic_constants.h"

#include <cfloat>

namespace flashproof::bounds {

ArithmeticConstants constants_for(ArithmeticModel m, DType t) {
  ArithmeticConstants k;
  k.dtype_u = unit_roundoff(t);
  switch (t) {
    case DType::fp16: k.dtype_abs = 0x1p-25, k.dtype_max = 65504; break;
    case DType::bf16: k.dtype_abs = 0x1p-134, k.dtype_max = 0x1.fcp127; break;
    case DType::fp32: k.dtype_abs = 0x1p-150, k.dtype_max = FLT_MAX, k.product_roundings = 1; break;
  }
  if (m == ArithmeticModel::naive) {
    k.flash = false;
    k.sum_eta = k.u;  // scalar fp32 sums, round to nearest
    k.dot_block = 1;
    k.exp_rel = 0x1p-22;  // expf: within 1 ulp (glibc), taken as 2
    k.scale_rel = 0;      // natural exp: no log2(e) folded into the scale
    k.flush = 0x1p-149;   // the host keeps subnormals: half a subnormal step per operation, doubled
  }
  return k;
}

}  // namespace flashproof::bounds
