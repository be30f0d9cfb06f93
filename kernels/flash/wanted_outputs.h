// Partial launches on the emulator, for sampled checks (docs/fuzz.md, "Sampled checks"): which
// query rows' outputs (O, LSE, dQ) and key columns' (dK, dV) are wanted. A forward thread block
// whose rows hold none returns at once; a backward key block whose keys hold none visits only the
// query blocks that hold a wanted row (their dQ needs every key block). Every output that is
// computed is computed exactly as in a full launch (the same blocks, loops and summation order;
// tests/kernels/flash/test_partial_launch.cpp checks it bitwise); the others are left unwritten.
// Only the emulated build reads it (`#if !defined(__CUDA_ARCH__)` at the use): on a GPU every
// block runs, and the GPU kernels' machine code is not changed by it.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace flashproof::kernels {

struct WantedOutputs {
  const std::uint8_t* rows = nullptr;  // [batch][heads_q][seqlen_q], 1 = wanted; null: every row
  const std::uint8_t* cols = nullptr;  // [batch][heads_kv][seqlen_k]; null: every column

  // Whether any of rows first .. first + count - 1 (clipped to seqlen) of (batch, head) is wanted.
  FP_HOST_DEVICE bool any_row(int heads_q, int seqlen_q, int batch, int head, int first, int count) const {
    return any(rows, (static_cast<long long>(batch) * heads_q + head) * seqlen_q, seqlen_q, first, count);
  }
  FP_HOST_DEVICE bool any_col(int heads_kv, int seqlen_k, int batch, int kv_head, int first, int count) const {
    return any(cols, (static_cast<long long>(batch) * heads_kv + kv_head) * seqlen_k, seqlen_k, first, count);
  }

 private:
  FP_HOST_DEVICE static bool any(const std::uint8_t* mask, long long base, int length, int first, int count) {
    if (mask == nullptr) return true;
    for (int x = first; x < first + count && x < length; ++x)
      if (mask[base + x]) return true;
    return false;
  }
};

}  // namespace flashproof::kernels
