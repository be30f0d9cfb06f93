// The CUDA runtime calls behind kernels/flash/gpu_runtime.h.
#include "kernels/flash/gpu_runtime.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace flashproof::kernels::gpu {
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}
}  // namespace

bool device_usable() {
  static const bool usable = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return false;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return false;
    return prop.major >= 8;
  }();
  return usable;
}

int multiprocessor_count() {
  static const int count = [] {
    int n = 0;
    check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0), "multiprocessor count");
    return n;
  }();
  return count;
}

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc");
  return p;
}
void device_free(void* p) { cudaFree(p); }
void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to device");
}
void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  check(cudaDeviceSynchronize(), "kernel");
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy to host");
}

void copy_rows_on_device(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                         std::size_t height) {
  check(cudaMemcpy2D(dst, dst_pitch, src, src_pitch, width, height, cudaMemcpyDeviceToDevice), "copy rows");
}

void synchronize() { check(cudaDeviceSynchronize(), "kernel"); }

}  // namespace flashproof::kernels::gpu
