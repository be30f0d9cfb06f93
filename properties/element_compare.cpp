#include "properties/element_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace flashproof::properties {

std::string where(const char* tensor, const Index& i, int rank) {
  std::string s = std::string(tensor) + "[" + std::to_string(i[0]);
  for (int k = 1; k < rank; ++k) (s += ',') += std::to_string(i[k]);  // not "," + ...: GCC 12 -Wrestrict false positive
  return s + "]";
}

std::string hex(std::uint32_t b) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", b);
  return buf;
}

std::string exact(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string bitwise_mismatch(const char* name, const HostTensor& actual, const HostTensor& expected) {
  return bitwise_mismatch(name, actual, expected, [](const Index& i) { return i; });
}

std::string outside(const char* name, const HostTensor& a, const HostTensor& b, double allowed) {
  std::string why;
  for_each_index(a, [&](const Index& i) {
    if (!why.empty()) return;
    const double x = value_at(a, i), y = value_at(b, i);
    if (x == y) return;
    if (!(std::fabs(x - y) <= allowed))
      why = std::string(name) + " differs by " + exact(std::fabs(x - y)) + " at " + where(name, i, a.rank()) +
            " (allowed " + exact(allowed) + ")";
  });
  return why;
}

double max_abs(const HostTensor& t) {
  double m = 0;
  for_each_index(t, [&](const Index& i) { m = std::max(m, std::fabs(value_at(t, i))); });
  return m;
}

}  // namespace flashproof::properties
