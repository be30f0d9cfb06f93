// The arithmetic domain the algorithm pieces are written over. Every piece in kernels/algo/ uses
// only the operators of its type plus Domain<T>'s functions, so the same source instantiates with
// int (block ranges), float (kernels, emulator), double (host checks) and z3::expr (the proofs,
// which specialise Domain<z3::expr> in proofs/z3_domain.h).
// Domain<T>::select evaluates both operands; the pieces are written so that both are harmless.
#pragma once

#include <limits>
#include <type_traits>

#include "core/host_device.h"
#include "kernels/arch/scalar_math.h"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace flashproof::algo {

template <class T, class Enable = void>
struct Domain;

template <class T>
struct Domain<T, std::enable_if_t<std::is_integral_v<T>>> {
  FP_HOST_DEVICE static T lit(long long v, T) { return static_cast<T>(v); }
  FP_HOST_DEVICE static T select(bool c, T a, T b) { return c ? a : b; }
  FP_HOST_DEVICE static T min(T a, T b) { return a < b ? a : b; }
  FP_HOST_DEVICE static T max(T a, T b) { return a < b ? b : a; }
};

// float: the kernels' arithmetic (products through arch::mul_rn, exp2 and log approximate).
template <>
struct Domain<float> {
  FP_HOST_DEVICE static float lit(double v, float) { return static_cast<float>(v); }
  FP_HOST_DEVICE static float select(bool c, float a, float b) { return c ? a : b; }
  FP_HOST_DEVICE static float max(float a, float b) {
#if defined(__CUDA_ARCH__)
    return fmaxf(a, b);
#else
    return std::fmax(a, b);
#endif
  }
  FP_HOST_DEVICE static float mul(float a, float b) { return arch::mul_rn(a, b); }
  FP_HOST_DEVICE static float div(float a, float b) { return a / b; }
  FP_HOST_DEVICE static float exp2(float x) { return arch::exp2_approx(x); }
  FP_HOST_DEVICE static float log(float x) { return arch::log_approx(x); }
  FP_HOST_DEVICE static float tanh(float x) { return arch::tanh_fp32(x); }
  FP_HOST_DEVICE static bool is_neg_inf(float x) { return x == -std::numeric_limits<float>::infinity(); }
  FP_HOST_DEVICE static bool is_zero(float x) { return x == 0.0f; }
  FP_HOST_DEVICE static float pos_inf(float) { return std::numeric_limits<float>::infinity(); }
};

// double: host checks with correctly rounded library functions.
template <>
struct Domain<double> {
  static double lit(double v, double) { return v; }
  static double select(bool c, double a, double b) { return c ? a : b; }
  static double max(double a, double b) { return std::fmax(a, b); }
  static double mul(double a, double b) { return a * b; }
  static double div(double a, double b) { return a / b; }
  static double exp2(double x) { return std::exp2(x); }
  static double log(double x) { return std::log(x); }
  static double tanh(double x) { return std::tanh(x); }
  static bool is_neg_inf(double x) { return x == -std::numeric_limits<double>::infinity(); }
  static bool is_zero(double x) { return x == 0.0; }
  static double pos_inf(double) { return std::numeric_limits<double>::infinity(); }
};

}  // namespace flashproof::algo
