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

#include <string>

#include "tests/kernels/flash/flash_cases.h"

namespace flashproof::flash_tests {

inline constexpr double kFa1Fa2AgreementFloors = 2;

// Empty when both FA1's and FA2's buckets for the case are built, else the reason to skip.
inline std::string fa1_or_fa2_not_built(const FlashCase& fa1_case) {
  FlashCase fa2_case = fa1_case;
  fa2_case.impl = "fa2";
  const std::string why = bucket_not_built(fa1_case);
  return why.empty() ? bucket_not_built(fa2_case) : why;
}

// The FA1 case passes the harness's verdict on `where` ("emulated" or "gpu"), and FA1 agrees with
// FA2 on its inputs.
inline void expect_fa1_case_passes_and_matches_fa2(const FlashCase& fa1_case, const char* where) {
  CheckRecord record;
  expect_case_passes(fa1_case, where, &record);
  if (::testing::Test::HasFatalFailure()) return;
  expect_fa1_matches_fa2(fa1_case, record, kFa1Fa2AgreementFloors);
}

}  // namespace flashproof::flash_tests
