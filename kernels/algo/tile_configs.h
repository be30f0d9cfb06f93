// The tile shapes of every kernel loop, per head-dim bucket. The kernels pick their tiles from this
// table and the block-skip proofs run once per distinct shape in it, so a new or changed tile shape
// is proved as soon as it is added here.
#pragma once

#include <cstddef>

namespace flashproof::algo {

enum class LoopOrder {
  keys_inner,   // query block outer, key blocks inner (FA2 forward)
  queries_inner // key block outer, query blocks inner (FA1 forward, both backwards)
};

struct TileConfig {
  const char* kernel;     // "fa1" or "fa2"
  const char* direction;  // "forward" or "backward"
  int head_dim_bucket;    // largest head dim served (head dims are padded up to it)
  int block_m;
  int block_n;
  int warps;
  LoopOrder order;
};

inline constexpr int kHeadDimBuckets[] = {32, 64, 96, 128, 160, 192, 224, 256};

inline constexpr TileConfig kTileConfigs[] = {
    {"fa2", "forward", 32, 128, 128, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 64, 128, 128, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 96, 128, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 128, 128, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 160, 128, 32, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 192, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 224, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "forward", 256, 64, 64, 4, LoopOrder::keys_inner},
    {"fa2", "backward", 32, 128, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 64, 128, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 96, 64, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 128, 64, 128, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 160, 64, 64, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 192, 64, 64, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 224, 64, 64, 8, LoopOrder::queries_inner},
    {"fa2", "backward", 256, 64, 64, 8, LoopOrder::queries_inner},
    {"fa1", "forward", 64, 64, 64, 4, LoopOrder::queries_inner},
    {"fa1", "forward", 128, 64, 64, 4, LoopOrder::queries_inner},
    {"fa1", "forward", 256, 32, 64, 4, LoopOrder::queries_inner},
    {"fa1", "backward", 64, 64, 64, 4, LoopOrder::queries_inner},
    {"fa1", "backward", 128, 64, 64, 4, LoopOrder::queries_inner},
    {"fa1", "backward", 256, 32, 32, 4, LoopOrder::queries_inner},
};

inline constexpr std::size_t kTileConfigCount = sizeof(kTileConfigs) / sizeof(kTileConfigs[0]);

}  // namespace flashproof::algo
