// The engine is instantiated once per number type, each in its own translation unit.
#pragma once

#include "reference/driver.h"
#include "reference/mp_types.h"

namespace flashproof::reference {

#define FLASHPROOF_REFERENCE_DECLARE(Real)                                                       \
  extern template class Engine<Real>;                                                            \
  extern template void run_forward<Real>(const DenseInputs&, ArithModel,                         \
                                         const std::vector<std::uint8_t>&, EngineOutput<Real>&, \
                                         int, Mutation);                                                   \
  extern template void run_backward<Real>(const DenseInputs&, ArithModel,                        \
                                          const std::vector<std::uint8_t>&,                      \
                                          const std::vector<std::uint8_t>&, EngineOutput<Real>&, \
                                          int, Mutation);

#define FLASHPROOF_REFERENCE_DEFINE(Real)                                                        \
  template class Engine<Real>;                                                                   \
  template void run_forward<Real>(const DenseInputs&, ArithModel,                                \
                                  const std::vector<std::uint8_t>&, EngineOutput<Real>&, int,    \
                                  Mutation);                                                     \
  template void run_backward<Real>(const DenseInputs&, ArithModel,                               \
                                   const std::vector<std::uint8_t>&,                             \
                                   const std::vector<std::uint8_t>&, EngineOutput<Real>&, int,   \
                                   Mutation);

FLASHPROOF_REFERENCE_DECLARE(double)
FLASHPROOF_REFERENCE_DECLARE(MpfrReal)
FLASHPROOF_REFERENCE_DECLARE(BinFloatReal)

}  // namespace flashproof::reference
