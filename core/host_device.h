// FP_HOST_DEVICE marks a function callable from both host and device code (nvcc), and is empty in a
// host-only build. It lives in core/ because core's bit-level float formats (float_format.h) are
// compiled into device code too; this header includes nothing, so kernels/algo and kernels/arch
// use it without depending on the rest of core/.
#pragma once

#ifndef FP_HOST_DEVICE
#if defined(__CUDACC__)
#define FP_HOST_DEVICE __host__ __device__
#else
#define FP_HOST_DEVICE
#endif
#endif
