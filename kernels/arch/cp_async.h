// cp.async of 16 bytes from global to shared memory, with commit and wait groups. Device: the PTX
// instructions (sm_80+). Host: the emulator's checked copy, synchronous under its default schedule;
// under an explored schedule (emu::set_schedule) in flight until the issuing thread's wait covers
// its group, so that a kernel reading the destination before its wait (or before the barrier after
// it) is reported as a race, as it would be wrong on the GPU.
#pragma once

#include "core/host_device.h"

#if !defined(__CUDA_ARCH__)
#include "kernels/emu/emulator.h"
#endif

namespace flashproof::arch {

FP_HOST_DEVICE inline void cp_async_16(void* smem_dst, const void* global_src) {
#if defined(__CUDA_ARCH__)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src));
#else
  emu::cp_async_copy(smem_dst, global_src, true);
#endif
}

// As cp_async_16 when `valid`; otherwise the 16 destination bytes are zero-filled and nothing is
// read (src-size 0), for rows past the end of a sequence. global_src must still be a valid
// address (pass any in-bounds one).
FP_HOST_DEVICE inline void cp_async_16_or_zero(void* smem_dst, const void* global_src, bool valid) {
#if defined(__CUDA_ARCH__)
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(global_src), "r"(src_bytes));
#else
  emu::cp_async_copy(smem_dst, global_src, valid);
#endif
}

FP_HOST_DEVICE inline void cp_async_commit() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;\n" ::);
#else
  emu::cp_async_commit();
#endif
}

// Waits until at most `pending` committed groups are still in flight.
template <int pending>
FP_HOST_DEVICE inline void cp_async_wait() {
#if defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
#else
  emu::cp_async_wait(pending);
#endif
}

}  // namespace flashproof::arch
