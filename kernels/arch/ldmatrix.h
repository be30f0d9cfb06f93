// ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16 (sm_75+): a warp loads 1, 2 or 4 8x8
// matrices of 16-bit elements from shared memory into mma fragments. Lanes 8j..8j+7 give the
// addresses of rows 0..7 of matrix j (each row 16 contiguous bytes, 16-byte aligned); register j of
// every lane receives two elements of matrix j.
//
// Layout: PTX ISA, "Warp-level matrix load instruction: ldmatrix" (9.7.14.5.15 in the release
// consulted; figure "ldmatrix fragment layout for one 8x8 matrix with 16-bit elements"): a group of
// four consecutive lanes loads one row, so lane l holds row l / 4, columns 2 * (l % 4) and
// 2 * (l % 4) + 1, low half first. With .trans the matrix is read column-major: lane l holds
// column l / 4, rows 2 * (l % 4) and 2 * (l % 4) + 1.
//
// Device: the instruction. Host: a per-lane hook the SIMT emulator defines; it gathers the 32 row
// addresses and calls ldmatrix_warp, the pure warp-level model below.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "core/host_device.h"
#include "kernels/arch/fragment.h"

namespace flashproof::arch {

// The stored element (row = which of the 8 row addresses, col = element within that row) that
// lane `lane` receives as 16-bit half `half` (0: low) of its register for each matrix.
FP_HOST_DEVICE constexpr MatrixCoord ldmatrix_element(int lane, int half, bool trans) {
  const int group = lane / 4, pair = 2 * (lane % 4) + half;
  return trans ? MatrixCoord{pair, group} : MatrixCoord{group, pair};
}

namespace host {
// Defined in host_warp_ops.cpp (library fp_arch), at the emulator's warp rendezvous: the calling
// lane's registers of a warp-wide ldmatrix_warp (only the first `count` entries of out are written).
// It also checks each addressed 16-byte row as a shared-memory read, since kernels reach shared
// memory only through kernels/arch.
void ldmatrix_lane(int count, bool trans, const void* row_addr, std::uint32_t out[4]);
}  // namespace host

// The per-lane operation: smem_row is the row this lane addresses (see above). The asm is volatile
// and clobbers memory because it reads shared memory through an address the compiler cannot see.
template <int kCount, bool kTrans = false>
FP_HOST_DEVICE inline void ldmatrix(const void* smem_row, std::uint32_t (&out)[kCount]) {
  static_assert(kCount == 1 || kCount == 2 || kCount == 4, "ldmatrix loads 1, 2 or 4 matrices");
#if defined(__CUDA_ARCH__)
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_row));
  if constexpr (kCount == 1 && !kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(out[0])
                 : "r"(addr)
                 : "memory");
  } else if constexpr (kCount == 1 && kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(out[0])
                 : "r"(addr)
                 : "memory");
  } else if constexpr (kCount == 2 && !kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(out[0]), "=r"(out[1])
                 : "r"(addr)
                 : "memory");
  } else if constexpr (kCount == 2 && kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(out[0]), "=r"(out[1])
                 : "r"(addr)
                 : "memory");
  } else if constexpr (!kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                 : "r"(addr)
                 : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(out[0]), "=r"(out[1]), "=r"(out[2]), "=r"(out[3])
                 : "r"(addr)
                 : "memory");
  }
#else
  std::uint32_t registers[4] = {};
  host::ldmatrix_lane(kCount, kTrans, smem_row, registers);
  for (int j = 0; j < kCount; ++j) out[j] = registers[j];
#endif
}

// ---- host model ----

// One warp's ldmatrix: row_addr[8j + r] points at row r of matrix j (only the first 8 * count
// entries are read); out[l][j] receives lane l's register j for j < count, registers past count
// are left as they were.
inline void ldmatrix_warp(int count, bool trans, const std::uint16_t* const row_addr[32],
                          std::uint32_t out[32][4]) {
  if (count != 1 && count != 2 && count != 4)
    throw std::invalid_argument("ldmatrix_warp: count must be 1, 2 or 4");
  for (int lane = 0; lane < 32; ++lane) {
    for (int matrix = 0; matrix < count; ++matrix) {
      std::uint16_t halves[2];
      for (int half = 0; half < 2; ++half) {
        const MatrixCoord at = ldmatrix_element(lane, half, trans);
        halves[half] = row_addr[8 * matrix + at.row][at.col];
      }
      out[lane][matrix] = pack_halves(halves[0], halves[1]);
    }
  }
}

}  // namespace flashproof::arch
