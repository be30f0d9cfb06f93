// The CUDA runtime calls the flash kernels' APIs and FlashBuffer need (gpu_runtime.cu, nvcc), kept
// out of the C++ sources so that those build without the CUDA headers. Errors throw
// std::runtime_error("cuda: ...").
#pragma once

#include <cstddef>

#if defined(FLASHPROOF_HAS_CUDA)
namespace flashproof::kernels::gpu {

bool device_usable();  // a device of compute capability 8.0 or newer
int multiprocessor_count();  // of device 0, for grid sizing
void* device_alloc(std::size_t bytes);
void device_free(void* p);
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);  // after the kernels finish
void synchronize();

}  // namespace flashproof::kernels::gpu
#endif
