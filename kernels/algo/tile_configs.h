// The tile shapes of every kernel loop, per head-dim bucket. The kernels pick their tiles from this
// table and the block-skip proofs run once per distinct shape in it, so a new or changed tile shape
// is proved as soon as it is added here. Each loop has a shipped shape and an alternate one: the
// alternate exists so that the tile-independence property (properties/) can run the same kernel
// code with other block sizes, warp counts and so other summation orders and rescale points.
#pragma once

#include <cstddef>

namespace flashproof::algo {

enum class LoopOrder {
  keys_inner,   // query block outer, key blocks inner (FA2 forward)
  queries_inner // key block outer, query blocks inner (FA1 forward, both backwards)
};

// shipped: the shapes the kernels run by default (tuned for speed); alternate: smaller, other
// shapes selected through FlashOptions::tiles, for testing only.
enum class TileSet { shipped, alternate };

// FA2 forward: block_m / warps rows per warp, a multiple of 16. Both backwards: 16 keys per warp,
// so warps = block_n / 16, or twice that where two warps split a key group's head dim (head dims
// above 128, whose dK and dV would not fit one warp's registers). FA1 forward: block_n / warps keys
// per warp (a multiple of 16), each warp holding a block_m x head_dim partial of P V in registers,
// so block_m shrinks as head_dim grows.
struct TileConfig {
  const char* kernel;     // "fa1" or "fa2"
  const char* direction;  // "forward" or "backward"
  int head_dim_bucket;    // largest head dim served (head dims are padded up to it)
  int block_m;
  int block_n;
  int warps;
  LoopOrder order;
  TileSet set = TileSet::shipped;
};

inline constexpr int kHeadDimBuckets[] = {32, 64, 96, 128, 160, 192, 224, 256};     // FA2
inline constexpr int kFa1HeadDimBuckets[] = {64, 128, 256};

inline constexpr TileConfig kTileConfigs[] = {
    {"fa2", "forward", 32, 64, 128, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 64, 64, 128, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 96, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 128, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 160, 64, 32, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 192, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 224, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 256, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "backward", 32, 64, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 64, 64, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 96, 64, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 128, 32, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 160, 64, 64, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 192, 64, 64, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 224, 32, 64, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 256, 64, 64, 8, LoopOrder::queries_inner},
    {"fa1", "forward", 64, 64, 64, 4, LoopOrder::queries_inner},
    {"fa1", "forward", 128, 32, 64, 4, LoopOrder::queries_inner},
    {"fa1", "forward", 256, 16, 64, 4, LoopOrder::queries_inner},
    {"fa1", "backward", 64, 32, 64, 4, LoopOrder::queries_inner},
    {"fa1", "backward", 128, 32, 64, 4, LoopOrder::queries_inner},
    {"fa1", "backward", 256, 32, 64, 8, LoopOrder::queries_inner},
    // Alternates: each differs from its shipped shape in block_m or block_n and mostly in both, and
    // in rows or keys per warp, so rows meet their keys in other blocks and other warps.
    {"fa2", "forward", 32, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 64, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 96, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 128, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 160, 64, 64, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 192, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 224, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "forward", 256, 64, 32, 4, LoopOrder::keys_inner, TileSet::alternate},
    {"fa2", "backward", 32, 32, 64, 4, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 64, 32, 64, 4, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 96, 32, 64, 4, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 128, 32, 64, 4, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 160, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 192, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 224, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa2", "backward", 256, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa1", "forward", 64, 32, 128, 4, LoopOrder::queries_inner, TileSet::alternate},
    {"fa1", "forward", 128, 16, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa1", "forward", 256, 16, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa1", "backward", 64, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa1", "backward", 128, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
    {"fa1", "backward", 256, 32, 32, 2, LoopOrder::queries_inner, TileSet::alternate},
};

inline constexpr std::size_t kTileConfigCount = sizeof(kTileConfigs) / sizeof(kTileConfigs[0]);

constexpr bool same_name(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

// The configuration of a kernel loop for a head-dim bucket; a bucket missing from the table is a
// compile error where the kernels instantiate it (constexpr evaluation reaches the throw).
constexpr TileConfig tile_config(const char* kernel, const char* direction, int head_dim_bucket,
                                 TileSet set = TileSet::shipped) {
  for (const TileConfig& c : kTileConfigs)
    if (same_name(c.kernel, kernel) && same_name(c.direction, direction) && c.head_dim_bucket == head_dim_bucket &&
        c.set == set)
      return c;
  throw "no tile configuration for this kernel, direction and head-dim bucket";
}

// The smallest FA2 bucket that holds head_dim, or 0 when head_dim exceeds the largest.
constexpr int head_dim_bucket(int head_dim) {
  for (int b : kHeadDimBuckets)
    if (head_dim <= b) return b;
  return 0;
}

// The same for FA1, which has fewer buckets (fewer instantiations; head dims pad further).
constexpr int fa1_head_dim_bucket(int head_dim) {
  for (int b : kFa1HeadDimBuckets)
    if (head_dim <= b) return b;
  return 0;
}

}  // namespace flashproof::algo
