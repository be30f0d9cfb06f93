// The FA1 case check shared by the emulated and gpu tests: the harness's verdict, then FA1 against
// FA2 on the same inputs (properties/properties.h: matches_fa2, kFa1Fa2AgreementFloors, and why
// two rounding floors).
#pragma once

#include <string>

#include "properties/properties.h"
#include "tests/kernels/flash/flash_cases.h"

namespace flashproof::flash_tests {

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
  const properties::Outcome o = properties::matches_fa2(*find_implementation("fa1"), to_case(fa1_case), record);
  EXPECT_TRUE(o.holds) << o.why;
}

}  // namespace flashproof::flash_tests
