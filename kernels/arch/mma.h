// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (sm_80+): D = A * B + C for one
// warp, A 16x16 (row-major), B 16x8 ("col": stored k-contiguous per column), C and D 16x8 fp32.
// Each lane holds a fragment: MmaA (8 16-bit values in 4 registers), MmaB (4 in 2), MmaC (4 floats).
//
// Fragment layouts: PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"
// (9.7.14.5.8 or 9.7.15.5.8, depending on the ISA release; Figures 79, 81, 83). Element i of
// a fragment sits in register i / 2, the even element in the low 16 bits ("low to high" order).
//
// Device: the instruction itself. Host: a per-lane hook the SIMT emulator defines; it gathers the
// 32 lanes' fragments and calls mma_m16n8k16_warp, the pure warp-level model below.
//
// Host arithmetic model: products of the 16-bit inputs are exact, and each D element is
// c + (sum of its 16 products) computed exactly and rounded once to fp32, round to nearest even
// (kernels/arch/exact_sum.h, which also states the NaN/inf/signed-zero rules). The hardware does
// not round once: published measurements find that it aligns the addends to the largest exponent
// and truncates inside its accumulation. Device and host results may therefore differ in the last bits;
// that difference is for the kernels' error bounds to cover, and is not expected to be zero.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "core/host_device.h"
#include "kernels/arch/exact_sum.h"
#include "kernels/arch/fragment.h"
#include "kernels/arch/half_bits.h"

namespace flashproof::arch {

enum class MmaTag { fp16, bf16 };

struct MmaA {
  std::uint32_t reg[4];
};
struct MmaB {
  std::uint32_t reg[2];
};
struct MmaC {
  float reg[4];
};

// The PTX ISA's names: lanes come in 8 groups of 4.
FP_HOST_DEVICE constexpr int mma_group_id(int lane) { return lane >> 2; }
FP_HOST_DEVICE constexpr int mma_thread_in_group(int lane) { return lane % 4; }

// A element a_i (i in 0..7) of a lane: rows groupID (a0,a1,a4,a5) and groupID + 8 (a2,a3,a6,a7);
// columns 2 * threadID_in_group + (i & 1), plus 8 for i >= 4.
FP_HOST_DEVICE constexpr MatrixCoord mma_a_element(int lane, int i) {
  const bool bottom_rows = (i & 2) != 0;
  return {mma_group_id(lane) + (bottom_rows ? 8 : 0),
          2 * mma_thread_in_group(lane) + (i & 1) + (i >= 4 ? 8 : 0)};
}

// B element b_i (i in 0..3), as (k row, n column): rows 2 * threadID_in_group + (i & 1), plus 8 for
// i >= 2; column groupID.
FP_HOST_DEVICE constexpr MatrixCoord mma_b_element(int lane, int i) {
  return {2 * mma_thread_in_group(lane) + (i & 1) + (i >= 2 ? 8 : 0), mma_group_id(lane)};
}

// C/D element c_i (i in 0..3): row groupID (c0,c1) or groupID + 8 (c2,c3); column
// 2 * threadID_in_group + (i & 1).
FP_HOST_DEVICE constexpr MatrixCoord mma_c_element(int lane, int i) {
  return {mma_group_id(lane) + (i >= 2 ? 8 : 0), 2 * mma_thread_in_group(lane) + (i & 1)};
}

namespace host {
// Defined in host_warp_ops.cpp (library fp_arch), at the emulator's warp rendezvous: the calling
// lane's share of a warp-wide mma_m16n8k16_warp.
MmaC mma_m16n8k16_lane(MmaTag tag, const MmaA& a, const MmaB& b, const MmaC& c);
}  // namespace host

// The per-lane operation every kernel calls, for an input type known at compile time: each kernel
// instantiation holds one tensor-core instruction kind and no dtype branch. Asm is volatile so that
// the compiler neither drops nor moves a warp-synchronous instruction into divergent code.
template <MmaTag kTag>
FP_HOST_DEVICE inline MmaC mma_m16n8k16(const MmaA& a, const MmaB& b, const MmaC& c) {
#if defined(__CUDA_ARCH__)
  MmaC d;
  if constexpr (kTag == MmaTag::bf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
        : "=f"(d.reg[0]), "=f"(d.reg[1]), "=f"(d.reg[2]), "=f"(d.reg[3])
        : "r"(a.reg[0]), "r"(a.reg[1]), "r"(a.reg[2]), "r"(a.reg[3]), "r"(b.reg[0]), "r"(b.reg[1]),
          "f"(c.reg[0]), "f"(c.reg[1]), "f"(c.reg[2]), "f"(c.reg[3]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
        : "=f"(d.reg[0]), "=f"(d.reg[1]), "=f"(d.reg[2]), "=f"(d.reg[3])
        : "r"(a.reg[0]), "r"(a.reg[1]), "r"(a.reg[2]), "r"(a.reg[3]), "r"(b.reg[0]), "r"(b.reg[1]),
          "f"(c.reg[0]), "f"(c.reg[1]), "f"(c.reg[2]), "f"(c.reg[3]));
  }
  return d;
#else
  return host::mma_m16n8k16_lane(kTag, a, b, c);
#endif
}

// The same with the input type chosen at run time (tests and sample kernels; the attention
// kernels use the template).
FP_HOST_DEVICE inline MmaC mma_m16n8k16(MmaTag tag, const MmaA& a, const MmaB& b, const MmaC& c) {
  return tag == MmaTag::bf16 ? mma_m16n8k16<MmaTag::bf16>(a, b, c) : mma_m16n8k16<MmaTag::fp16>(a, b, c);
}

// ---- host model ----

// One warp's mma: lane l's operands are a[l], b[l], c[l]; its result goes to d[l]. d may alias c
// (every operand is gathered before anything is written). Each element of D is c plus 16 products,
// summed exactly and rounded once to fp32 (kernels/arch/exact_sum.h). Fast path: the products of
// 16-bit inputs are exact in double, and when every partial sum in double is exact too (each TwoSum
// error is zero), the double sum is the exact sum and converting it to float is that one rounding;
// an element with an inexact partial sum, or a warp with a NaN or inf operand, goes through the
// 576-bit sum (ArchMma.FastPathAgreesWithTheExactSum checks both against ExactFp32Sum).
inline void mma_m16n8k16_warp(MmaTag tag, const MmaA a[32], const MmaB b[32], const MmaC c[32], MmaC d[32]) {
  const bool bf16 = tag == MmaTag::bf16;
  const FloatFormat input_format = bf16 ? kBf16Format : kFp16Format;
  const auto value = [bf16](std::uint16_t h) { return double{bf16 ? bf16_bits_to_float(h) : fp16_bits_to_float(h)}; };
  std::uint16_t a_bits[16][16], b_bits[16][8];
  double a_matrix[16][16], b_matrix[16][8];
  float c_matrix[16][8];
  bool finite = true;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const MatrixCoord at = mma_a_element(lane, i);
      a_bits[at.row][at.col] = fragment_half(a[lane].reg, i);
      a_matrix[at.row][at.col] = value(a_bits[at.row][at.col]);
      finite = finite && std::isfinite(a_matrix[at.row][at.col]);
    }
    for (int i = 0; i < 4; ++i) {
      const MatrixCoord at = mma_b_element(lane, i);
      b_bits[at.row][at.col] = fragment_half(b[lane].reg, i);
      b_matrix[at.row][at.col] = value(b_bits[at.row][at.col]);
      finite = finite && std::isfinite(b_matrix[at.row][at.col]);
    }
    for (int i = 0; i < 4; ++i) {
      const MatrixCoord at = mma_c_element(lane, i);
      c_matrix[at.row][at.col] = c[lane].reg[i];
      finite = finite && std::isfinite(c_matrix[at.row][at.col]);
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const MatrixCoord at = mma_c_element(lane, i);
      double sum = c_matrix[at.row][at.col];
      bool exact = finite;
      for (int k = 0; k < 16 && exact; ++k) {
        const double p = a_matrix[at.row][k] * b_matrix[k][at.col];
        const double t = sum + p, pb = t - sum;
        exact = ((sum - (t - pb)) + (p - pb)) == 0;
        sum = t;
      }
      if (exact) {
        d[lane].reg[i] = static_cast<float>(sum);
        continue;
      }
      ExactFp32Sum exact_sum;
      exact_sum.add(decode(std::bit_cast<std::uint32_t>(c_matrix[at.row][at.col]), kFp32Format));
      for (int k = 0; k < 16; ++k)
        exact_sum.add_product(decode(a_bits[at.row][k], input_format), decode(b_bits[k][at.col], input_format));
      d[lane].reg[i] = exact_sum.round_to_fp32();
    }
  }
}

}  // namespace flashproof::arch
