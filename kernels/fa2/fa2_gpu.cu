// The FA2 kernels built by nvcc for the GPU (the CUDA runtime calls: kernels/flash/gpu_runtime.cu).
#include "kernels/fa2/entry_points.h"
