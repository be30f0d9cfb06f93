// The tile shapes of every kernel loop, per head-dim bucket. The kernels pick their tiles from this
// table and the block-skip proofs run once per distinct shape in it, so a new or changed tile shape
// is proved as soon as it is added here. Each loop has a shipped shape and an alternate one: the
// alternate exists so that the tile-independence property (properties/) can run the same kernel
// code with other block sizes, warp counts and so other summation orders and rescale points.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <span>

namespace flashproof::algo {

// The table's keys: which kernel family, which direction.
enum class KernelFamily { fa1, fa2 };
enum class Direction { forward, backward };

constexpr const char* family_name(KernelFamily f) { return f == KernelFamily::fa1 ? "fa1" : "fa2"; }
constexpr const char* direction_name(Direction d) { return d == Direction::forward ? "forward" : "backward"; }

// The head-dim buckets of each family, ascending; a head dim is padded up to the smallest bucket
// that holds it. These two lines are the only place the lists are written: kernels/CMakeLists.txt
// reads them (keep each on one line, as `kFa?HeadDimBuckets[] = {...};`) to check and encode the
// FLASHPROOF_FA?_HEAD_DIMS options. FA1 has fewer buckets (fewer instantiations; head dims pad further).
inline constexpr int kFa2HeadDimBuckets[] = {32, 64, 96, 128, 160, 192, 224, 256};
inline constexpr int kFa1HeadDimBuckets[] = {64, 128, 256};

constexpr std::span<const int> head_dim_buckets(KernelFamily f) {
  if (f == KernelFamily::fa1) return kFa1HeadDimBuckets;
  return kFa2HeadDimBuckets;
}

// shipped: the shapes the kernels run by default (tuned for speed); alternate: smaller, other
// shapes selected through FlashOptions::tiles, for testing only.
enum class TileSet { shipped, alternate };

// FA2 forward: block_m / warps rows per warp, a multiple of 16; 128 rows (FlashAttention-2's
// block_m for d <= 128) as 8 warps of 16, so registers per thread stay those of a 64-row block. Both backwards: 16 keys per warp,
// so warps = block_n / 16, or twice that where two warps split a key group's head dim (head dims
// above 128, whose dK and dV would not fit one warp's registers). FA1 forward: block_n / warps keys
// per warp (a multiple of 16), each warp holding a block_m x head_dim partial of P V in registers,
// so block_m shrinks as head_dim grows. Which loop is inner is each kernel's own code, not a column
// here (FA2's forward: key blocks inside a query block; FA1's forward and both backwards: query
// blocks inside a key block).
struct TileConfig {
  KernelFamily kernel;
  Direction direction;
  int head_dim_bucket;  // largest head dim served (head dims are padded up to it)
  int block_m;
  int block_n;
  int warps;
  TileSet set = TileSet::shipped;
};

inline constexpr TileConfig kTileConfigs[] = {
    {KernelFamily::fa2, Direction::forward, 32, 128, 128, 8},
    {KernelFamily::fa2, Direction::forward, 64, 128, 128, 8},
    {KernelFamily::fa2, Direction::forward, 96, 128, 64, 8},
    {KernelFamily::fa2, Direction::forward, 128, 128, 64, 8},
    {KernelFamily::fa2, Direction::forward, 160, 64, 32, 4},
    {KernelFamily::fa2, Direction::forward, 192, 128, 64, 8},
    {KernelFamily::fa2, Direction::forward, 224, 64, 64, 4},
    {KernelFamily::fa2, Direction::forward, 256, 64, 64, 4},
    {KernelFamily::fa2, Direction::backward, 32, 64, 128, 8},
    {KernelFamily::fa2, Direction::backward, 64, 64, 128, 8},
    {KernelFamily::fa2, Direction::backward, 96, 64, 128, 8},
    {KernelFamily::fa2, Direction::backward, 128, 32, 128, 8},
    {KernelFamily::fa2, Direction::backward, 160, 64, 64, 8},
    {KernelFamily::fa2, Direction::backward, 192, 64, 64, 8},
    {KernelFamily::fa2, Direction::backward, 224, 32, 64, 8},
    {KernelFamily::fa2, Direction::backward, 256, 64, 64, 8},
    {KernelFamily::fa1, Direction::forward, 64, 64, 64, 4},
    {KernelFamily::fa1, Direction::forward, 128, 32, 64, 4},
    {KernelFamily::fa1, Direction::forward, 256, 16, 64, 4},
    {KernelFamily::fa1, Direction::backward, 64, 32, 64, 4},
    {KernelFamily::fa1, Direction::backward, 128, 32, 64, 4},
    {KernelFamily::fa1, Direction::backward, 256, 32, 64, 8},
    // Alternates: each differs from its shipped shape in block_m or block_n and mostly in both, and
    // in rows or keys per warp, so rows meet their keys in other blocks and other warps.
    {KernelFamily::fa2, Direction::forward, 32, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 64, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 96, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 128, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 160, 64, 64, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 192, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 224, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::forward, 256, 64, 32, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 32, 32, 64, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 64, 32, 64, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 96, 32, 64, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 128, 32, 64, 4, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 160, 32, 32, 2, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 192, 32, 32, 2, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 224, 32, 32, 2, TileSet::alternate},
    {KernelFamily::fa2, Direction::backward, 256, 32, 32, 2, TileSet::alternate},
    {KernelFamily::fa1, Direction::forward, 64, 32, 128, 4, TileSet::alternate},
    {KernelFamily::fa1, Direction::forward, 128, 16, 32, 2, TileSet::alternate},
    {KernelFamily::fa1, Direction::forward, 256, 16, 32, 2, TileSet::alternate},
    {KernelFamily::fa1, Direction::backward, 64, 32, 32, 2, TileSet::alternate},
    {KernelFamily::fa1, Direction::backward, 128, 32, 32, 2, TileSet::alternate},
    {KernelFamily::fa1, Direction::backward, 256, 32, 32, 2, TileSet::alternate},
};

inline constexpr std::size_t kTileConfigCount = sizeof(kTileConfigs) / sizeof(kTileConfigs[0]);

// The configuration of a kernel loop for a head-dim bucket; a bucket missing from the table is a
// compile error where the kernels instantiate it (constexpr evaluation reaches the throw).
constexpr TileConfig tile_config(KernelFamily kernel, Direction direction, int head_dim_bucket,
                                 TileSet set = TileSet::shipped) {
  for (const TileConfig& c : kTileConfigs)
    if (c.kernel == kernel && c.direction == direction && c.head_dim_bucket == head_dim_bucket && c.set == set)
      return c;
  throw "no tile configuration for this kernel, direction and head-dim bucket";
}

// The smallest bucket of the family that holds head_dim, or 0 when head_dim exceeds the largest.
constexpr int head_dim_bucket(KernelFamily f, int head_dim) {
  for (int b : head_dim_buckets(f))
    if (head_dim <= b) return b;
  return 0;
}
// FA2's and FA1's, by their older names.
constexpr int head_dim_bucket(int head_dim) { return head_dim_bucket(KernelFamily::fa2, head_dim); }
constexpr int fa1_head_dim_bucket(int head_dim) { return head_dim_bucket(KernelFamily::fa1, head_dim); }

// Every (family, direction, bucket, tile set) has its row: the kernels instantiate them all.
constexpr bool table_complete() {
  for (KernelFamily f : {KernelFamily::fa1, KernelFamily::fa2})
    for (Direction d : {Direction::forward, Direction::backward})
      for (int bucket : head_dim_buckets(f))
        for (TileSet set : {TileSet::shipped, TileSet::alternate}) {
          int rows = 0;
          for (const TileConfig& c : kTileConfigs)
            rows += c.kernel == f && c.direction == d && c.head_dim_bucket == bucket && c.set == set;
          if (rows != 1) return false;
        }
  return kTileConfigCount == 2 * 2 * (std::size(kFa1HeadDimBuckets) + std::size(kFa2HeadDimBuckets));
}
static_assert(table_complete(), "kTileConfigs needs exactly one row per family, direction, bucket and tile set");

}  // namespace flashproof::algo
