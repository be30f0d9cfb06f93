// The bottom-right window's definition (docs/spec.md "Masks and windows") in 128-bit arithmetic
// that cannot overflow, for tests that check the mask's spellings against it.
#pragma once

#include <cstdint>

namespace flashproof {

inline bool window_admits(std::int64_t sq, std::int64_t sk, std::int64_t left, std::int64_t right, std::int64_t i,
                          std::int64_t j) {
  const __int128 diag = static_cast<__int128>(i) + sk - sq;
  return (right < 0 || j <= diag + right) && (left < 0 || j >= diag - left);
}

}  // namespace flashproof
