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
// `height` rows of `width` bytes from device to device, rows `src_pitch` and `dst_pitch` bytes
// apart, in stream order with the launches.
void copy_rows_on_device(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                         std::size_t height);
void synchronize();

}  // namespace flashproof::kernels::gpu
#endif
