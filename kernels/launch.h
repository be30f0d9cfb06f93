// The one place where the GPU and the emulated build of a kernel differ: launching it and finding
// its dynamic shared memory. Kernel sources include this header, use only dynamic shared memory
// (dynamic_smem<T>()), and wrap their code in namespace FP_TARGET so that the nvcc build (gpu) and
// the g++ build (emulated) of the same source can live in one program.
//
// Both helpers live in FP_TARGET too: their bodies differ between the builds, and a template
// instantiated for parameter types outside FP_TARGET would otherwise get one mangled name in the
// nvcc and the g++ objects, of which the linker keeps one (in 9e977a8 GPU launches ran the
// emulator's body: results/gpu_2026-11-27_h200_9e977a8). The rule and its check:
// docs/architecture.md, "One source, two builds"; scripts/cross-build-symbols.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/emu/cuda_host.h"
#include "kernels/emu/emulator.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define FP_TARGET gpu
#else
#define FP_TARGET emulated
#endif

namespace flashproof::kernels {
using emu::Dim3;
}  // namespace flashproof::kernels

namespace flashproof::kernels::FP_TARGET {

#if defined(__CUDACC__)
template <class T>
__device__ inline T* dynamic_smem() {
  extern __shared__ __align__(16) unsigned char fp_dynamic_smem[];
  return reinterpret_cast<T*>(fp_dynamic_smem);
}
#else
template <class T>
inline T* dynamic_smem() {
  return reinterpret_cast<T*>(emu::dynamic_smem());
}
#endif

// Launches kernel<<<grid, block, smem_bytes>>>(args...) on the GPU (nvcc build) or on the emulator.
template <class... Params, class... Args>
void launch_kernel(const char* name, Dim3 grid, Dim3 block, std::size_t smem_bytes, void (*kernel)(Params...),
                   Args&&... args) {
#if defined(__CUDACC__)
  if (smem_bytes > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem_bytes));
    if (e != cudaSuccess) throw std::runtime_error(std::string(name) + ": " + cudaGetErrorString(e));
  }
  kernel<<<dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z), smem_bytes>>>(
      std::forward<Args>(args)...);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw std::runtime_error(std::string(name) + ": launch failed: " + cudaGetErrorString(e));
#else
  emu::LaunchConfig config;
  config.kernel = name;
  config.grid = grid;
  config.block = block;
  config.dynamic_smem = smem_bytes;
  emu::launch(config, [&] { kernel(args...); });
#endif
}

}  // namespace flashproof::kernels::FP_TARGET
