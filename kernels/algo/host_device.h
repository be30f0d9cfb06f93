// FP_HOST_DEVICE (core/host_device.h, a self-contained header) marks the shared algorithm pieces as
// callable from host and device code; the loop pragmas below are the kernels' own.
#pragma once

#include "core/host_device.h"

// Full unrolling of a loop over register arrays, so nvcc keeps them in registers (a loop it leaves
// rolled indexes them at run time and moves them to local memory). No effect on the host build.
#ifndef FP_UNROLL
#if defined(__CUDACC__)
#define FP_UNROLL _Pragma("unroll")
#else
#define FP_UNROLL
#endif
#endif

// A loop left rolled: one that indexes no register array, where unrolling would only let the
// compiler hoist its loads and raise register pressure.
#ifndef FP_ROLLED
#if defined(__CUDACC__)
#define FP_ROLLED _Pragma("unroll 1")
#else
#define FP_ROLLED
#endif
#endif
