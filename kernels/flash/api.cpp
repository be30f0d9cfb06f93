#include "kernels/flash/api.h"

#include <cstring>
#include <new>
#include <stdexcept>

#include "kernels/flash/gpu_runtime.h"

namespace flashproof::kernels {

bool flash_gpu_usable() {
#if defined(FLASHPROOF_HAS_CUDA)
  return gpu::device_usable();
#else
  return false;
#endif
}

FlashBuffer::FlashBuffer(FlashTarget target, std::size_t bytes) : target_(target), bytes_(bytes) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) {
    data_ = gpu::device_alloc(bytes);
    return;
  }
#endif
  // 16-byte aligned, as the kernels' chunked loads require.
  data_ = ::operator new(bytes == 0 ? 16 : bytes, std::align_val_t{16});
}

FlashBuffer::~FlashBuffer() {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target_ == FlashTarget::gpu) {
    gpu::device_free(data_);
    return;
  }
#endif
  ::operator delete(data_, std::align_val_t{16});
}

void FlashBuffer::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_) throw std::invalid_argument("flash: upload larger than the buffer");
#if defined(FLASHPROOF_HAS_CUDA)
  if (target_ == FlashTarget::gpu) return gpu::copy_to_device(data_, host, bytes);
#endif
  std::memcpy(data_, host, bytes);
}

void FlashBuffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_) throw std::invalid_argument("flash: download larger than the buffer");
#if defined(FLASHPROOF_HAS_CUDA)
  if (target_ == FlashTarget::gpu) return gpu::copy_to_host(host, data_, bytes);
#endif
  std::memcpy(host, data_, bytes);
}

}  // namespace flashproof::kernels
