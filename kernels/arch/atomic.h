// fp32 atomicAdd on global memory. Host: blocks may run on parallel host threads, so a real atomic,
// and a scheduling point of the emulator, so that explored schedules vary the order atomics land in.
#pragma once

#include "core/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <atomic>

#include "kernels/emu/emulator.h"
#endif

namespace flashproof::arch {

FP_HOST_DEVICE inline float atomic_add(float* address, float value) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(address, value);
#else
  emu::schedule_point();
  return std::atomic_ref<float>(*address).fetch_add(value, std::memory_order_relaxed);
#endif
}

}  // namespace flashproof::arch
