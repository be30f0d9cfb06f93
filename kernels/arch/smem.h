// Scalar shared-memory loads and stores. On the GPU a plain access; on the host a scheduling point
// of the emulator, which checks the access for bounds and for races with other threads since the
// last barrier. Kernels touch shared memory only through these, cp_async and ldmatrix.
#pragma once

#include <cstdint>

#include "core/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <cstring>

#include "kernels/emu/emulator.h"
#endif

namespace flashproof::arch {

template <class T>
FP_HOST_DEVICE inline T smem_load(const T* p) {
#if defined(__CUDA_ARCH__)
  return *p;
#else
  emu::schedule_point();
  emu::check_smem(p, sizeof(T), false);
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
#endif
}

template <class T>
FP_HOST_DEVICE inline void smem_store(T* p, const T& v) {
#if defined(__CUDA_ARCH__)
  *p = v;
#else
  emu::schedule_point();
  emu::check_smem(p, sizeof(T), true);
  std::memcpy(p, &v, sizeof(T));
#endif
}

// 16 bytes, aligned: one LDS.128 / STG.128 on the device (staged tiles stored in whole chunks).
struct alignas(16) Chunk16 {
  std::uint32_t word[4];
};

// A 16-byte store to global memory (dst 16-byte aligned). Host: a plain copy (the emulator checks
// shared memory only; global accesses are the harness's buffers).
FP_HOST_DEVICE inline void global_store_16(void* dst, const Chunk16& v) {
#if defined(__CUDA_ARCH__)
  *static_cast<Chunk16*>(dst) = v;
#else
  std::memcpy(dst, &v, sizeof v);
#endif
}

// A 16-byte load from global memory (src 16-byte aligned): LDG.128 on the device, a copy on the host.
FP_HOST_DEVICE inline Chunk16 global_load_16(const void* src) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const Chunk16*>(src);
#else
  Chunk16 v;
  std::memcpy(&v, src, sizeof v);
  return v;
#endif
}

}  // namespace flashproof::arch
