// The multiprecision number types of the reference and their arithmetic models.
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include "reference/arith.h"

namespace flashproof::reference {

namespace mp = boost::multiprecision;

// MPFR with runtime precision (Boost's default precision is process-wide: see MpfrPrecision).
using MpfrReal = mp::number<mp::mpfr_float_backend<0>, mp::et_off>;
// An independent backend (Boost's own binary floats), 128 significand bits.
inline constexpr unsigned kBinFloatBits = 128;
using BinFloatReal = mp::number<mp::cpp_bin_float<kBinFloatBits, mp::digit_base_2>, mp::et_off>;

// Sets MPFR's working precision to at least `bits` for its lifetime; serialises MPFR users,
// since the precision is a process-wide setting. Reports the precision actually in use.
class MpfrPrecision {
 public:
  explicit MpfrPrecision(unsigned bits);
  ~MpfrPrecision();
  MpfrPrecision(const MpfrPrecision&) = delete;
  MpfrPrecision& operator=(const MpfrPrecision&) = delete;
  unsigned bits() const { return bits_; }
  ArithModel model() const;

 private:
  unsigned saved_digits10_;
  unsigned bits_;
};

// mpfr_exp and mpfr_log are correctly rounded (error <= 2^-p relative).
// cpp_bin_float's exp and log carry no documented error bound; we assume at most 64 units of
// 2^-128 and check that assumption against MPFR in the reference tests.
inline ArithModel bin_float_model() {
  const double u = 0x1p-128;
  return {u, 64 * u, 1e5};
}
// Fast path: glibc's exp and log are within 1 ulp on x86-64; we allow 2 ulps (4 u).
inline ArithModel double_model() {
  const double u = 0x1p-53;
  return {u, 4 * u, 700};
}

}  // namespace flashproof::reference
