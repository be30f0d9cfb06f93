// Scalar fp32 operations whose rounding the algorithm relies on, with a device and a host
// implementation:
// - mul_rn: a product rounded on its own. nvcc fuses a*b+c into an FMA by default; the scaled
//   logits must be rounded before the max is taken and subtracted (see kernels/algo/online_softmax.h),
//   so the device path uses __fmul_rn, which is never contracted. The host build uses
//   -ffp-contract=off, so a plain product is already rounded once.
// - exp2_approx: the hardware's ex2.approx.ftz.f32 on device. The host implementation is std::exp2
//   rounded to float; both satisfy the properties the proofs assume (docs/proofs.md, theorem 6):
//   exp2(-inf) = +0, exp2(+-0) = 1, monotone, exp2(x) in [0, 1] for x <= 0, never NaN for non-NaN x.
#pragma once

#include "core/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace flashproof::arch {

FP_HOST_DEVICE inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

FP_HOST_DEVICE inline float exp2_approx(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::exp2(x);
#endif
}

// The natural log of a row's l for its LSE: logf (CUDA: within 1 ulp) rather than __logf, whose
// absolute error near 1 (2^-21.4) is several fp32 ulps of a small LSE; it runs once per row.
FP_HOST_DEVICE inline float log_approx(float x) {
#if defined(__CUDA_ARCH__)
  return logf(x);
#else
  return std::log(x);
#endif
}

// The soft cap's tanh (algo/score_mod.h): tanhf, within 2 ulps on the device (CUDA C Programming
// Guide, "Mathematical Functions") and in glibc on the host, not tanh.approx.f32, whose relative
// error of 2^-11 would cost the capped logits 12 bits (docs/error-bounds.md "Score modification").
FP_HOST_DEVICE inline float tanh_fp32(float x) {
#if defined(__CUDA_ARCH__)
  return tanhf(x);
#else
  return std::tanh(x);
#endif
}

}  // namespace flashproof::arch
