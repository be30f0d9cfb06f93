// The FA2 kernels built by g++ for the host SIMT emulator.
#include "kernels/fa2/entry_points.h"
