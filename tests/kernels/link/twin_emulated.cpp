// The g++ half of the twin (twin.h).
#include "tests/kernels/link/twin.h"

namespace flashproof::tests::link_twin {
int gxx_side(int n) { return built_by(Params{n}); }
}  // namespace flashproof::tests::link_twin
