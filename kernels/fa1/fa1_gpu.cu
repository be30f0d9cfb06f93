// The FA1 kernels built by nvcc for the GPU.
#include "kernels/fa1/entry_points.h"
