// Warp shuffles and votes over the full warp (mask 0xffffffff, as the kernels use them). Device:
// the __shfl_*_sync / __*_sync intrinsics. Host: an emulator rendezvous of the 32 lanes, with the
// PTX semantics (a source lane outside the warp, for down, keeps the caller's own value).
#pragma once

#include <cstdint>

#include "core/host_device.h"

#if !defined(__CUDA_ARCH__)
#include "kernels/emu/source_site.h"

#include "kernels/emu/emulator.h"
#endif

namespace flashproof::arch {

inline constexpr std::uint32_t kFullWarp = 0xffffffffu;

#if !defined(__CUDA_ARCH__)
namespace host {
struct ShuffleIn {
  float value;
  int arg;  // lane mask (xor), delta (down) or source lane (idx), all lanes alike
};
inline void shuffle_xor(const ShuffleIn* in, float* out, std::uint32_t) {
  for (int l = 0; l < 32; ++l) out[l] = in[(l ^ in[l].arg) & 31].value;
}
inline void shuffle_down(const ShuffleIn* in, float* out, std::uint32_t) {
  for (int l = 0; l < 32; ++l) out[l] = l + in[l].arg < 32 ? in[l + in[l].arg].value : in[l].value;
}
inline void shuffle_idx(const ShuffleIn* in, float* out, std::uint32_t) {
  for (int l = 0; l < 32; ++l) out[l] = in[in[l].arg & 31].value;
}
inline void no_data(const int*, int*, std::uint32_t) {}
inline void ballot(const int* in, std::uint32_t* out, std::uint32_t mask) {
  std::uint32_t bits = 0;
  for (int l = 0; l < 32; ++l) bits |= (in[l] != 0 && ((mask >> l) & 1u)) ? (1u << l) : 0u;
  for (int l = 0; l < 32; ++l) out[l] = bits;
}
}  // namespace host
#define FP_SITE , emu::SourceSite site = emu::SourceSite::current()
#define FP_SITE_ONLY emu::SourceSite site = emu::SourceSite::current()
#else
#define FP_SITE
#define FP_SITE_ONLY
#endif

FP_HOST_DEVICE inline float shfl_xor(float v, int lane_mask FP_SITE) {
#if defined(__CUDA_ARCH__)
  return __shfl_xor_sync(kFullWarp, v, lane_mask);
#else
  return emu::warp_collective<host::ShuffleIn, float, host::shuffle_xor>("shfl.xor", site, kFullWarp, {v, lane_mask});
#endif
}

FP_HOST_DEVICE inline float shfl_down(float v, int delta FP_SITE) {
#if defined(__CUDA_ARCH__)
  return __shfl_down_sync(kFullWarp, v, delta);
#else
  return emu::warp_collective<host::ShuffleIn, float, host::shuffle_down>("shfl.down", site, kFullWarp, {v, delta});
#endif
}

FP_HOST_DEVICE inline float shfl_idx(float v, int src_lane FP_SITE) {
#if defined(__CUDA_ARCH__)
  return __shfl_sync(kFullWarp, v, src_lane);
#else
  return emu::warp_collective<host::ShuffleIn, float, host::shuffle_idx>("shfl.idx", site, kFullWarp, {v, src_lane});
#endif
}

FP_HOST_DEVICE inline std::uint32_t ballot(bool predicate FP_SITE) {
#if defined(__CUDA_ARCH__)
  return __ballot_sync(kFullWarp, predicate);
#else
  return emu::warp_collective<int, std::uint32_t, host::ballot>("vote.ballot", site, kFullWarp, predicate ? 1 : 0);
#endif
}

FP_HOST_DEVICE inline bool any(bool predicate FP_SITE) {
#if defined(__CUDA_ARCH__)
  return __any_sync(kFullWarp, predicate);
#else
  return ballot(predicate, site) != 0;
#endif
}

FP_HOST_DEVICE inline bool all(bool predicate FP_SITE) {
#if defined(__CUDA_ARCH__)
  return __all_sync(kFullWarp, predicate);
#else
  return ballot(predicate, site) == kFullWarp;
#endif
}

// __syncwarp: orders the shared-memory accesses of the warp's lanes.
FP_HOST_DEVICE inline void syncwarp(FP_SITE_ONLY) {
#if defined(__CUDA_ARCH__)
  __syncwarp(kFullWarp);
#else
  emu::warp_collective<int, int, host::no_data>("syncwarp", site, kFullWarp, 0);
#endif
}

#undef FP_SITE
#undef FP_SITE_ONLY

}  // namespace flashproof::arch
