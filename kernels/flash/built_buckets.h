// Which head-dim buckets of a kernel family this build compiles. CMake's FLASHPROOF_FA2_HEAD_DIMS
// and FLASHPROOF_FA1_HEAD_DIMS narrow them for quick local builds and arrive as bit masks over the
// family's bucket list (FLASHPROOF_FA2_BUCKETS, FLASHPROOF_FA1_BUCKETS, bit i for the i-th bucket of
// kernels/algo/tile_configs.h), given to the kernel libraries only; a translation unit compiled
// without them (scripts/sass-report's direct nvcc runs) builds every bucket.
#pragma once

#include <cstddef>

#include "kernels/algo/tile_configs.h"

namespace flashproof::kernels::flash {

constexpr unsigned built_bucket_mask(algo::KernelFamily f) {
#if defined(FLASHPROOF_FA1_BUCKETS)
  if (f == algo::KernelFamily::fa1) return FLASHPROOF_FA1_BUCKETS;
#endif
#if defined(FLASHPROOF_FA2_BUCKETS)
  if (f == algo::KernelFamily::fa2) return FLASHPROOF_FA2_BUCKETS;
#endif
  return (1u << algo::head_dim_buckets(f).size()) - 1;
}

constexpr bool bucket_built(algo::KernelFamily f, int bucket) {
  const auto buckets = algo::head_dim_buckets(f);
  for (std::size_t i = 0; i < buckets.size(); ++i)
    if (buckets[i] == bucket) return ((built_bucket_mask(f) >> i) & 1u) != 0;
  return false;
}

// The head-dim buckets with a score-mod instantiation (the soft cap and ALiBi; FA2 only, shipped
// tiles only, one forward and one backward per bucket and input type; docs/fa2.md "Soft cap and
// ALiBi"), of those the build compiles. A problem with a soft cap or ALiBi slopes in another bucket
// is refused (validate.h; the harness's unsupported_reason), never run by a dense kernel. Three
// buckets, not eight: all eight took the FA2 objects' compile from 79 s to 135 s (nvcc) and from 24 s
// to 38 s (g++), past the build-time target (results/build_time_scoremod_2026-11-28.txt). d 64, 128
// and 256 serve the models that use them (Gemma 2: 128 and 256; Grok-1, BLOOM, MPT, Baichuan: 128).
inline constexpr int kFa2ScoreModBuckets[] = {64, 128, 256};

constexpr bool score_mod_built(algo::KernelFamily f, int bucket) {
  if (f != algo::KernelFamily::fa2 || !bucket_built(f, bucket)) return false;
  for (int b : kFa2ScoreModBuckets)
    if (b == bucket) return true;
  return false;
}

// The head-dim buckets with a decode instantiation (KV caches, paged K/V, split-KV: FA2 only, one
// decode kernel per bucket and input type, one combine kernel per input type and one append kernel; docs/fa2.md
// "Decoding"), of those the build compiles. Two buckets to keep the build time: the harness
// adapter runs other head dims up to 128 zero-padded into them; a call in another bucket is refused.
inline constexpr int kFa2DecodeBuckets[] = {64, 128};

constexpr bool decode_built(algo::KernelFamily f, int bucket) {
  if (f != algo::KernelFamily::fa2 || !bucket_built(f, bucket)) return false;
  for (int b : kFa2DecodeBuckets)
    if (b == bucket) return true;
  return false;
}

// The CMake option that narrows a family's buckets, named in the "not built" error.
constexpr const char* buckets_option(algo::KernelFamily f) {
  return f == algo::KernelFamily::fa1 ? "FLASHPROOF_FA1_HEAD_DIMS" : "FLASHPROOF_FA2_HEAD_DIMS";
}

}  // namespace flashproof::kernels::flash
