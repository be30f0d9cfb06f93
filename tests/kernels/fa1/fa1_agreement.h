// How closely FA1 and FA2 must agree on the same inputs, in the harness's rounding floors
// (tests/kernels/flash/flash_cases.h, expect_fa1_matches_fa2); shared by the emulated and gpu tests.
//
// A floor is floor_ulps (1; LSE 4) units u of the dtype's rounding at the tensor's largest
// reference magnitude M, i.e. between half an ulp and one ulp of M. Each kernel's final rounding to
// the dtype can land on either side of a rounding boundary, so two correct results may differ by an
// ulp of M, up to 2 floors, before any difference in how they got there. The kernels' paths differ
// little (the same products, P rounded against different maxima, fp32 sums in other orders): over
// the test matrix the largest difference measured on the emulator was 0.90 floors (O), 0.78 (dK),
// 0.68 (dQ), 0.49 (LSE), 0.41 (dV). The rule allows the two final roundings and nothing else.
#pragma once

namespace flashproof::flash_tests {

inline constexpr double kFa1Fa2AgreementFloors = 2;

}  // namespace flashproof::flash_tests
