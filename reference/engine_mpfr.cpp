#include <mutex>

#include "reference/instantiations.h"

namespace flashproof::reference {

FLASHPROOF_REFERENCE_DEFINE(MpfrReal)

namespace {
std::recursive_mutex& precision_mutex() {
  static std::recursive_mutex m;
  return m;
}
}  // namespace

MpfrPrecision::MpfrPrecision(unsigned bits) {
  precision_mutex().lock();
  saved_digits10_ = MpfrReal::default_precision();
  // Boost counts precision in decimal digits; ask for enough digits to cover `bits`.
  MpfrReal::default_precision(static_cast<unsigned>(bits * 0.30103) + 2);
  bits_ = static_cast<unsigned>(mpfr_get_prec(MpfrReal(1).backend().data()));
}

MpfrPrecision::~MpfrPrecision() {
  MpfrReal::default_precision(saved_digits10_);
  precision_mutex().unlock();
}

ArithModel MpfrPrecision::model() const {
  const double u = std::ldexp(1.0, -static_cast<int>(bits_));
  return {u, u, 1e5};
}

}  // namespace flashproof::reference
