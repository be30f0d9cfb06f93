// The numbers of the stated hardware model (docs/error-bounds.md Part 2, "The model"): the unit
// roundoffs and the error of each approximate operation an implementation performs, per
// ArithmeticModel and dtype. The bound formulas of this library use only these.
#pragma once

#include "core/attention_impl.h"
#include "core/dtype.h"

namespace flashproof::bounds {

struct ArithmeticConstants {
  bool flash = true;
  double u = 0x1p-24;        // fp32 round to nearest (scalar products, sums, divisions)
  double sum_eta = 0x1p-22;  // per-addition relative error of fp32 sums (tensor cores: truncation)
  int dot_block = 16;        // tensor-core k: dot products run over the head dim padded to this
  double exp_rel = 0x1p-21;  // relative error of exp2 (flash: ex2.approx) or exp (naive: expf)
  double log_rel = 0x1p-22;  // relative error of log
  double scale_rel = 0x1p-23;  // of the fp32 softmax_scale * log2(e) (flash only)
  double flush = 0x1p-126;   // what an fp32 result flushed to zero (or rounded as a subnormal) loses
  // Products of two dtype values: exact in fp32 for fp16/bf16 (11 + 11 or 8 + 8 bits), one more
  // rounding for fp32 inputs (naive only); below 2^-126 either may underflow (`flush` each).
  int product_roundings = 0;
  double dtype_u = 0;        // unit roundoff of the dtype
  double dtype_abs = 0;      // half the dtype's smallest subnormal: rounding error below the normal range
  double dtype_max = 0;      // largest finite value of the dtype
};

ArithmeticConstants constants_for(ArithmeticModel m, DType t);

}  // namespace flashproof::bounds
