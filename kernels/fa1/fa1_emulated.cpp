// The FA1 kernels built by g++ for the host SIMT emulator.
#include "kernels/fa1/entry_points.h"
