// fp32 atomicAdd on global memory. Host: blocks run on parallel host threads, so a real atomic.
#pragma once

#include "kernels/algo/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <atomic>
#endif

namespace flashproof::arch {

FP_HOST_DEVICE inline float atomic_add(float* address, float value) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(address, value);
#else
  return std::atomic_ref<float>(*address).fetch_add(value, std::memory_order_relaxed);
#endif
}

}  // namespace flashproof::arch
