// The error of D = rowsum(dO * O) that a flash-model backward forms in fp32 from the O it was
// given (the implementation's own, in the dtype), per query row: the check adds its share to
// dQ's and dK's bounds and to rule 3's allowance (harness/check.h, TensorCheck::d_error_share).
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof::bounds {

// The exact O as the reference certifies it, flat like the O tensor: value +- bound where checked.
struct ExactO {
  const std::vector<double>& value;
  const std::vector<double>& bound;
  const std::vector<std::uint8_t>& checked;
};

// Per query row (indexed like LSE), a bound on the error of D = rowsum(dO * O) formed from
// `given`, the O the implementation's backward was given, in fp32 (the flash model):
// |dO . (O^ - O)| against the reference's O, plus dO times the reference's bound, plus the fp32
// sum's rounding. Rows the reference left out (sampling) get the rounding of O to the dtype alone,
// u_dtype sum |dO| |O^|; rows where O^ is not finite get 0 (the forward fails or is out of the
// domain there; no allowance).
std::vector<double> d_error_of_given_o(const Problem& p, const HostTensor& given, const ExactO& ref,
                                       const HostTensor& dout);

}  // namespace flashproof::bounds
