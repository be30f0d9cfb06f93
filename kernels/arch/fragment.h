// What the warp-level operations (mma.h, ldmatrix.h) share: matrix coordinates of fragment elements
// and the packing of two 16-bit elements into one 32-bit register.
#pragma once

#include <cstdint>

#include "core/host_device.h"

namespace flashproof::arch {

struct MatrixCoord {
  int row;
  int col;
  friend constexpr bool operator==(const MatrixCoord&, const MatrixCoord&) = default;
};

// Two 16-bit elements in one register, the lower-numbered element in the low half (the PTX ISA's
// "elements (low to high)" order).
FP_HOST_DEVICE constexpr std::uint32_t pack_halves(std::uint16_t low, std::uint16_t high) {
  return std::uint32_t{low} | (std::uint32_t{high} << 16);
}

// The 16-bit element `i` of a fragment whose registers hold two each.
FP_HOST_DEVICE constexpr std::uint16_t fragment_half(const std::uint32_t* regs, int i) {
  return static_cast<std::uint16_t>(regs[i / 2] >> (16 * (i % 2)));
}

}  // namespace flashproof::arch
