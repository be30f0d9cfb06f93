// tile::LaneOffsets (kernels/tile/warp_fragments.h) against SmemTile::offset, the swizzled address
// every tile access is defined by: for each lane pattern the kernels use, every lane, every row0
// that is a multiple of 8 and every even chunk0 inside the tile, and tiles with both swizzle
// periods (8 and 4 chunks). The kernels' emulated tests then see the loads themselves.
#include <gtest/gtest.h>

#include "kernels/tile/smem_tile.h"
#include "kernels/tile/warp_fragments.h"

namespace flashproof::tile {
namespace {

struct Lanes {
  const char* name;
  int (*row)(int lane);
  int (*chunk)(int lane);
};

constexpr Lanes kPatterns[] = {
    {"a / b pair kn", [](int lane) { return lane % 16; }, [](int lane) { return lane / 16; }},
    {"b pair nk", [](int lane) { return lane % 8 + 8 * (lane / 16); }, [](int lane) { return (lane / 8) % 2; }},
};

// Mismatches of `offset(lanes, lane, row0, chunk0)` against Tile::offset over the whole sweep.
template <class Tile, class Offset>
int mismatches(Offset offset) {
  int bad = 0, checked = 0;
  for (const Lanes& p : kPatterns) {
    for (int lane = 0; lane < 32; ++lane) {
      const LaneOffsets<Tile> lanes(p.row(lane), p.chunk(lane));
      for (int row0 = 0; row0 + 16 <= Tile::kRows; row0 += 8) {
        for (int chunk0 = 0; chunk0 + 2 <= Tile::kChunks; chunk0 += 2) {
          const int want = Tile::offset(row0 + p.row(lane), 8 * (chunk0 + p.chunk(lane)));
          bad += offset(lanes, p, lane, row0, chunk0) == want ? 0 : 1;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
  return bad;
}

template <class Tile>
int shipped_mismatches() {
  return mismatches<Tile>([](const LaneOffsets<Tile>& lanes, const Lanes&, int, int row0, int chunk0) {
    return lanes(row0, chunk0);
  });
}

TEST(LaneOffsets, EqualTheSwizzledOffsetEverywhere) {
  static_assert(SmemTile<64, 128>::kSwizzle == 8 && SmemTile<64, 96>::kSwizzle == 4);
  EXPECT_EQ((shipped_mismatches<SmemTile<64, 32>>()), 0);
  EXPECT_EQ((shipped_mismatches<SmemTile<64, 64>>()), 0);
  EXPECT_EQ((shipped_mismatches<SmemTile<64, 96>>()), 0);
  EXPECT_EQ((shipped_mismatches<SmemTile<128, 128>>()), 0);
  EXPECT_EQ((shipped_mismatches<SmemTile<32, 160>>()), 0);
  EXPECT_EQ((shipped_mismatches<SmemTile<16, 224>>()), 0);
  EXPECT_EQ((shipped_mismatches<SmemTile<64, 256>>()), 0);
}

// The twin: offsets that add the lane's swizzled offset to the access's base without splitting
// the XOR (the shortcut LaneOffsets exists to avoid) must be caught.
TEST(LaneOffsets, SweepCatchesAnUnsplitSwizzle) {
  using Tile = SmemTile<64, 128>;
  const int bad = mismatches<Tile>([](const LaneOffsets<Tile>&, const Lanes& p, int lane, int row0, int chunk0) {
    return row0 * Tile::kCols + chunk0 * 8 + Tile::offset(p.row(lane), 8 * p.chunk(lane));
  });
  EXPECT_GT(bad, 0);
}

}  // namespace
}  // namespace flashproof::tile
