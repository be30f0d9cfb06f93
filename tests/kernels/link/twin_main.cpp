// The twin program (twin.h): both halves in one program, as the kernels' two builds are. Run, it
// prints what each side got; both get the one body the linker kept.
#include <cstdio>

#include "tests/kernels/link/twin.h"

int main() {
  using namespace flashproof::tests::link_twin;
  std::printf("nvcc side %d, g++ side %d\n", nvcc_side(0), gxx_side(0));
  return 0;
}
