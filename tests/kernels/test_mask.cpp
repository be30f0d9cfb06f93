// The mask predicate at the edges of its integer type: window sides up to 2^63 - 1 (a case file
// or the command line can give them) must mean what they say, without signed overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "kernels/algo/mask.h"

namespace flashproof {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// The definition of the bottom-right aligned window (docs/case-files.md, window_left), in 128-bit
// arithmetic that cannot overflow.
bool visible_wide(std::int64_t sq, std::int64_t sk, std::int64_t left, std::int64_t right, std::int64_t i,
                  std::int64_t j) {
  const __int128 diag = static_cast<__int128>(i) + sk - sq;
  const bool right_ok = right < 0 || j <= diag + right;
  const bool left_ok = left < 0 || j >= diag - left;
  return right_ok && left_ok;
}

TEST(WindowMask, HugeSidesMeanWhatTheySay) {
  const std::int64_t sides[] = {-1, 0, 1, 3, 128, std::int64_t{1} << 40, kMax - 1, kMax};
  const std::int64_t lengths[][2] = {{7, 5}, {3, 129}, {129, 3}, {1, 1}};
  for (auto [sq, sk] : lengths)
    for (std::int64_t left : sides)
      for (std::int64_t right : sides) {
        const algo::WindowMask<std::int64_t> m{sk - sq, left, right};
        for (std::int64_t i = 0; i < sq; ++i)
          for (std::int64_t j = 0; j < sk; ++j)
            ASSERT_EQ(m.visible(i, j), visible_wide(sq, sk, left, right, i, j))
                << "sq " << sq << " sk " << sk << " window " << left << "," << right << " (" << i << ", " << j << ")";
      }
}

// A side past every distance the lengths allow sees what the unbounded side sees.
TEST(WindowMask, ASideOfTwoToTheSixtyThreeIsUnbounded) {
  for (std::int64_t right : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{2}}) {
    const algo::WindowMask<std::int64_t> huge{5 - 7, kMax, right}, none{5 - 7, -1, right};
    for (std::int64_t i = 0; i < 7; ++i)
      for (std::int64_t j = 0; j < 5; ++j) ASSERT_EQ(huge.visible(i, j), none.visible(i, j)) << i << "," << j;
  }
}

}  // namespace
}  // namespace flashproof
