// Whether this machine can run the GPU tests (ctest label "gpu"). Those tests are built whenever
// CMake finds nvcc, also on machines without a GPU or driver; each starts with
// FLASHPROOF_REQUIRE_GPU(), which skips it (GTEST_SKIP, reported as skipped, not failed) there.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

namespace flashproof::tests {

struct GpuProbe {
  bool usable = false;
  std::string reason;  // why not, or how many devices
};

// Asks the CUDA runtime once per process: usable when cudaGetDeviceCount succeeds and finds at
// least one device and device 0 is sm_80 or newer (the error of a failed probe is cleared so that
// it does not surface later).
inline const GpuProbe& gpu_probe() {
  static const GpuProbe probe = [] {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return GpuProbe{false, std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e)};
    }
    if (count <= 0) return GpuProbe{false, "cudaGetDeviceCount found no device"};
    // The kernels use mma.sync m16n8k16, ldmatrix and cp.async: compute capability 8.0 or newer.
    cudaDeviceProp prop{};
    if (const cudaError_t pe = cudaGetDeviceProperties(&prop, 0); pe != cudaSuccess) {
      (void)cudaGetLastError();
      return GpuProbe{false, std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(pe)};
    }
    if (prop.major < 8)
      return GpuProbe{false, std::string(prop.name) + " is sm_" + std::to_string(prop.major) +
                                 std::to_string(prop.minor) + "; the kernels need sm_80 or newer"};
    return GpuProbe{true, std::to_string(count) + " device(s), device 0 " + prop.name};
  }();
  return probe;
}

inline bool gpu_usable() { return gpu_probe().usable; }

}  // namespace flashproof::tests

// First statement of a GPU test: skips the test where no GPU can be used.
#define FLASHPROOF_REQUIRE_GPU()                                                      \
  do {                                                                                \
    if (!::flashproof::tests::gpu_usable())                                           \
      GTEST_SKIP() << "no usable GPU (" << ::flashproof::tests::gpu_probe().reason << ")"; \
  } while (0)
