// FP_HOST_DEVICE marks the shared algorithm pieces as callable from host and device code.
#pragma once

#ifndef FP_HOST_DEVICE
#if defined(__CUDACC__)
#define FP_HOST_DEVICE __host__ __device__
#else
#define FP_HOST_DEVICE
#endif
#endif

// Full unrolling of a loop over register arrays, so nvcc keeps them in registers (a loop it leaves
// rolled indexes them at run time and moves them to local memory). No effect on the host build.
#ifndef FP_UNROLL
#if defined(__CUDACC__)
#define FP_UNROLL _Pragma("unroll")
#else
#define FP_UNROLL
#endif
#endif
