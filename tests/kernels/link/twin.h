// The twin of the cross-build symbol check (CMakeLists.txt here): a deliberate instance of the class
// the check exists for, in the shape of 9e977a8's launch_kernel. A template outside any
// target namespace, instantiated for a parameter type outside one, whose body depends on
// __CUDACC__: the nvcc and the g++ objects both define it under one mangled name with different
// code, and the check must report it.
#pragma once

namespace flashproof::tests::link_twin {

struct Params {
  int n;
};

template <class P>
[[gnu::noipa]] int built_by(const P& p) {
#if defined(__CUDACC__)
  return p.n + 1;
#else
  return p.n + 2;
#endif
}

int nvcc_side(int n);
int gxx_side(int n);

}  // namespace flashproof::tests::link_twin
