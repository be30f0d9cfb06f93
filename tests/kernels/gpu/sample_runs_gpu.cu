// The GPU runs of sample_runs.h: the nvcc build of kernels/sample_kernels.h, launched through
// kernels::gpu::launch_kernel (k::) on device 0. Every CUDA error becomes a std::runtime_error.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/sample_kernels.h"
#include "tests/kernels/gpu/sample_runs.h"

namespace flashproof::tests::samples {
namespace {

namespace k = kernels::gpu;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A device copy of a host vector (or `count` zeroed elements), freed on scope exit.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    check(cudaMalloc(&data_, (count > 0 ? count : 1) * sizeof(T)), "cudaMalloc");
    check(cudaMemset(data_, 0, count * sizeof(T)), "cudaMemset");
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    check(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }

  T* get() const { return data_; }
  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    check(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

void finish(const char* kernel) { check(cudaDeviceSynchronize(), kernel); }

}  // namespace

std::vector<float> matmul_gpu(const MatmulInput& in) {
  const DeviceBuffer<std::uint16_t> a(in.a), b(in.b);
  const DeviceBuffer<float> c(static_cast<std::size_t>(in.m) * in.n);
  k::launch_kernel("sample_matmul", {unsigned(in.m / 64), unsigned(in.n / 16), 1}, {k::kSampleThreads, 1, 1},
                   k::kSampleSmemBytes, k::sample_matmul, a.get(), b.get(), c.get(), in.n, in.k, in.tag, false);
  finish("sample_matmul");
  return c.to_host();
}

std::vector<float> block_sum_gpu(const std::vector<float>& in, unsigned threads) {
  const auto blocks = static_cast<unsigned>(in.size() / threads);
  const DeviceBuffer<float> d_in(in), out(blocks);
  k::launch_kernel("sample_block_sum", {blocks, 1, 1}, {threads, 1, 1}, threads / 32 * sizeof(float),
                   k::sample_block_sum, d_in.get(), out.get());
  finish("sample_block_sum");
  return out.to_host();
}

std::vector<float> atomic_histogram_gpu(const std::vector<float>& in, unsigned threads, int bin_count) {
  const DeviceBuffer<float> d_in(in), bins(static_cast<std::size_t>(bin_count));
  k::launch_kernel("sample_atomic_histogram", {static_cast<unsigned>(in.size() / threads), 1, 1},
                   {threads, 1, 1}, 0, k::sample_atomic_histogram, d_in.get(), bins.get(), bin_count);
  finish("sample_atomic_histogram");
  return bins.to_host();
}

}  // namespace flashproof::tests::samples
