// The mask predicate at the edges of its integer type: window sides up to 2^63 - 1 (a case file
// or the command line can give them) must mean what they say, without signed overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "kernels/algo/mask.h"
#include "tests/kernels/window_definition.h"

namespace flashproof {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(WindowMask, HugeSidesMeanWhatTheySay) {
  const std::int64_t sides[] = {-1, 0, 1, 3, 128, std::int64_t{1} << 40, kMax - 1, kMax};
  const std::int64_t lengths[][2] = {{7, 5}, {3, 129}, {129, 3}, {1, 1}};
  for (auto [sq, sk] : lengths)
    for (std::int64_t left : sides)
      for (std::int64_t right : sides) {
        const algo::WindowMask<std::int64_t> m{sk - sq, left, right};
        for (std::int64_t i = 0; i < sq; ++i)
          for (std::int64_t j = 0; j < sk; ++j)
            ASSERT_EQ(m.visible(i, j), window_admits(sq, sk, left, right, i, j))
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
