// Prints, one JSON object per line, every FA1/FA2 kernel instantiation the builds compile: the
// kernel's function name, tile shape, input type, threads, dynamic shared memory and tensor-core
// instructions per step of its inner loop (executed, and present in the loop's code), all read from
// the kernels' own traits. scripts/sass-report
// joins these with what ptxas and the SASS say about each compiled kernel.
#include <cstdio>
#include <string>
#include <utility>

#include "bench/command_line.h"
#include "core/json.h"
#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/forward_kernel.h"
#include "kernels/fa2/decode_kernel.h"
#include "kernels/fa2/forward_kernel.h"
#include "kernels/flash/built_buckets.h"
#include "kernels/flash/backward_key_block.h"

namespace {

using flashproof::algo::kTileConfigs;
using flashproof::algo::TileConfig;
using flashproof::algo::TileSet;
using flashproof::arch::MmaTag;
namespace k = flashproof::kernels::emulated;

// By index: clang 14 (the sanitized build's) rejects a reference to an array element as a template
// argument.
template <std::size_t kIndex, MmaTag kTag>
void print_row() {
  constexpr TileConfig c = kTileConfigs[kIndex];
  constexpr bool fa2 = c.kernel == flashproof::algo::KernelFamily::fa2;
  constexpr bool forward = c.direction == flashproof::algo::Direction::forward;
  using Traits = std::conditional_t<
      forward,
      std::conditional_t<fa2, k::Fa2ForwardTraits<c.head_dim_bucket, c.block_m, c.block_n, c.warps, kTag>,
                         k::Fa1ForwardTraits<c.head_dim_bucket, c.block_m, c.block_n, c.warps, kTag>>,
      k::FlashBackwardTraits<c.head_dim_bucket, c.block_m, c.block_n, c.warps, kTag>>;
  flashproof::json::Value row = flashproof::json::Value::object();
  row["kernel"] = std::string(family_name(c.kernel)) + "_" + direction_name(c.direction) + "_kernel";
  row["implementation"] = family_name(c.kernel);
  row["direction"] = direction_name(c.direction);
  row["head_dim"] = c.head_dim_bucket;
  row["block_m"] = c.block_m;
  row["block_n"] = c.block_n;
  row["warps"] = c.warps;
  row["dtype"] = kTag == MmaTag::bf16 ? "bf16" : "fp16";
  row["tiles"] = c.set == TileSet::shipped ? "shipped" : "alternate";
  row["threads"] = Traits::kThreads;
  row["dynamic_smem_bytes"] = static_cast<std::size_t>(Traits::kSmemBytes);
  row["mmas_per_step"] = Traits::kMmasPerStep;
  row["mmas_in_loop_code"] = Traits::kMmasInLoopCode;
  std::printf("%s\n", flashproof::json::write(row).c_str());
}

// The decode path's kernels (docs/fa2.md "Decoding"): one per bucket of kFa2DecodeBuckets and input
// type, shipped tiles (its combine kernel is a helper without tiles).
template <int kBucket, MmaTag kTag>
void print_decode_row() {
  using Traits = k::Fa2DecodeTraitsFor<kBucket, kTag>;
  flashproof::json::Value row = flashproof::json::Value::object();
  row["kernel"] = "fa2_decode_kernel";
  row["implementation"] = "fa2";
  row["direction"] = "decode";
  row["head_dim"] = kBucket;
  row["block_m"] = Traits::kBlockM;
  row["block_n"] = Traits::kBlockN;
  row["warps"] = Traits::kWarps;
  row["dtype"] = kTag == MmaTag::bf16 ? "bf16" : "fp16";
  row["tiles"] = "shipped";
  row["threads"] = Traits::kThreads;
  row["dynamic_smem_bytes"] = static_cast<std::size_t>(Traits::kSmemBytes);
  row["mmas_per_step"] = Traits::kMmasPerStep;
  row["mmas_in_loop_code"] = Traits::kMmasInLoopCode;
  std::printf("%s\n", flashproof::json::write(row).c_str());
}

template <std::size_t... I>
void print_all(std::index_sequence<I...>) {
  (print_row<I, MmaTag::fp16>(), ...);
  (print_row<I, MmaTag::bf16>(), ...);
  using flashproof::kernels::flash::kFa2DecodeBuckets;
  static_assert(sizeof(kFa2DecodeBuckets) / sizeof(int) == 2);
  print_decode_row<kFa2DecodeBuckets[0], MmaTag::fp16>(), print_decode_row<kFa2DecodeBuckets[1], MmaTag::fp16>();
  print_decode_row<kFa2DecodeBuckets[0], MmaTag::bf16>(), print_decode_row<kFa2DecodeBuckets[1], MmaTag::bf16>();
}

}  // namespace

int main(int argc, char** argv) {
  flashproof::bench::parse_no_options_or_exit(
      "Prints every FA1/FA2 kernel instantiation of the build (tile shape, dtype, threads, dynamic shared "
      "memory, tensor-core instructions per step) as one JSON object per line, for scripts/sass-report.",
      "kernel_table", argc, argv);
  print_all(std::make_index_sequence<flashproof::algo::kTileConfigCount>{});
  return 0;
}
