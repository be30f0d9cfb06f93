// FP_HOST_DEVICE marks the shared algorithm pieces as callable from host and device code.
#pragma once

#ifndef FP_HOST_DEVICE
#if defined(__CUDACC__)
#define FP_HOST_DEVICE __host__ __device__
#else
#define FP_HOST_DEVICE
#endif
#endif
