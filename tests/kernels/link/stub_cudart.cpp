// A stand-in for the CUDA runtime (libcudart.so.13), for running the GPU build's launch paths on a
// machine without a GPU (CMakeLists.txt here, test kernels.gpu_launches_are_configured). Programs
// load it instead of the real runtime through LD_LIBRARY_PATH. It runs no kernel: device memory is
// host memory, copies are memcpy, and a launch is only recorded, then zeroes every live allocation
// (so programs that check their outputs are finite go on: bench_flash times a backward only after
// a finite forward). What it checks is the launch
// protocol nvcc's host stubs follow: `kernel<<<...>>>` pushes a configuration that the kernel's
// host stub pops before __cudaLaunchKernel. A host stub called without a configuration is the
// 9e977a8 failure (the emulator's launch_kernel body calling GPU kernels directly): counted as an
// unconfigured launch, with cudaErrorMissingConfiguration as the real runtime answers.
//
// At exit it appends one line to $FLASHPROOF_STUB_CUDART_LOG (or stderr):
//   stub-cudart configured=N unconfigured=M unregistered=K kernels=NAME,NAME,...
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {

struct Configuration {
  dim3 grid, block;
  std::size_t shared = 0;
  void* stream = nullptr;
};

struct Ledger {
  std::mutex mutex;
  std::map<const void*, std::string> kernels;  // host stub -> device name (__cudaRegisterFunction)
  std::set<std::string> launched;
  std::map<void*, std::size_t> allocations;
  long configured = 0, unconfigured = 0, unregistered = 0;

  ~Ledger() {
    std::string names;
    for (const std::string& n : launched) names += (names.empty() ? "" : ",") + n;
    const char* path = std::getenv("FLASHPROOF_STUB_CUDART_LOG");
    std::FILE* f = path != nullptr ? std::fopen(path, "a") : nullptr;
    std::fprintf(f != nullptr ? f : stderr, "stub-cudart configured=%ld unconfigured=%ld unregistered=%ld kernels=%s\n",
                 configured, unconfigured, unregistered, names.c_str());
    if (f != nullptr) std::fclose(f);
  }
};

Ledger& ledger() {
  static Ledger l;
  return l;
}

thread_local std::vector<Configuration> pending;  // pushed by <<<>>>, popped by the host stub
thread_local cudaError_t last_error = cudaSuccess;

cudaError_t fail(cudaError_t e) {
  last_error = e;
  return e;
}

}  // namespace

extern "C" {

// The registration nvcc's generated code runs at start-up.
void** __cudaRegisterFatBinary(void* fat_cubin) {
  static void* handle;
  handle = fat_cubin;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char* host_fun, char*, const char* device_name, int, uint3*, uint3*, dim3*,
                            dim3*, int*) {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  ledger().kernels[host_fun] = device_name;
}

// The launch protocol.
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, std::size_t shared, struct CUstream_st* stream) {
  pending.push_back({grid, block, shared, stream});
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, std::size_t* shared, void* stream) {
  if (pending.empty()) {
    std::lock_guard<std::mutex> lock(ledger().mutex);
    ++ledger().unconfigured;
    return fail(cudaErrorMissingConfiguration);
  }
  const Configuration c = pending.back();
  pending.pop_back();
  *grid = c.grid, *block = c.block, *shared = c.shared;
  *static_cast<void**>(stream) = c.stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* fun) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(fun));
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3, dim3, void**, std::size_t, cudaStream_t) {
  std::lock_guard<std::mutex> lock(ledger().mutex);
  const auto it = ledger().kernels.find(reinterpret_cast<const void*>(kernel));
  if (it == ledger().kernels.end()) {
    ++ledger().unregistered;
    return fail(cudaErrorInvalidDeviceFunction);
  }
  ++ledger().configured;
  ledger().launched.insert(it->second);
  for (const auto& [p, bytes] : ledger().allocations) std::memset(p, 0, bytes);
  return cudaSuccess;
}
cudaError_t cudaFuncSetAttribute(const void*, enum cudaFuncAttribute, int) { return cudaSuccess; }

cudaError_t cudaGetLastError() {
  const cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMissingConfiguration: return "__global__ function call is not configured (stub runtime)";
    case cudaErrorInvalidDeviceFunction: return "invalid device function (stub runtime)";
    case cudaErrorMemoryAllocation: return "out of memory (stub runtime)";
    default: return "error (stub runtime)";
  }
}

// A device: one, of compute capability 9.0; its memory is the host's.
cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int) {
  std::memset(prop, 0, sizeof *prop);
  std::snprintf(prop->name, sizeof prop->name, "flashproof stub runtime");
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrMultiProcessorCount ? 132 : 0;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = 13000;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (*p == nullptr) return fail(cudaErrorMemoryAllocation);
  std::lock_guard<std::mutex> lock(ledger().mutex);
  ledger().allocations[*p] = bytes;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  {
    std::lock_guard<std::mutex> lock(ledger().mutex);
    ledger().allocations.erase(p);
  }
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, enum cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

// Events: bench_flash times between two; every interval is 1 ms.
cudaError_t cudaEventCreate(cudaEvent_t* event) {
  static int events;
  *event = reinterpret_cast<cudaEvent_t>(&events);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 1.0f;
  return cudaSuccess;
}

}  // extern "C"
