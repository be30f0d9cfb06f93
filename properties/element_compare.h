// Element-wise access to and comparison of output tensors, as the properties report them: walk a
// [b, s, h, d] tensor, compare bitwise or within an allowance, and name the first difference.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace flashproof::properties {

using Index = std::array<std::int64_t, 4>;

template <class F>
void for_each_index(const HostTensor& t, F f) {
  const Shape& s = t.shape();
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d) f(Index{a, b, c, d});
}

inline std::uint32_t bits_at(const HostTensor& t, const Index& i) { return t.bits(i[0], i[1], i[2], i[3]); }
inline double value_at(const HostTensor& t, const Index& i) { return t.get(i[0], i[1], i[2], i[3]); }

// "O[0,3,1,7]": the element's name in a reason, with the tensor's first `rank` indices.
std::string where(const char* tensor, const Index& i, int rank);
std::string hex(std::uint32_t b);  // "0x7E00"
std::string exact(double x);       // %.9g

// Element `i` of `actual` must have the bits of element map(i) of `expected`; the first mismatch
// is the reason (empty when none).
// Said with every bitwise mismatch: the property asks for equal bits, not for accuracy, so a
// reader can tell a 1-ulp difference from a wrong result.
inline constexpr const char* kBitwiseNote =
    "; this property demands bitwise equality (an implementation whose rounding of a row depends on "
    "other rows, the batch or the loop tail may differ by an ulp and still be within its bound: "
    "docs/properties.md)";

template <class Map>
std::string bitwise_mismatch(const char* name, const HostTensor& actual, const HostTensor& expected, Map map) {
  std::string why;
  for_each_index(actual, [&](const Index& i) {
    if (!why.empty()) return;
    const std::uint32_t a = bits_at(actual, i), e = bits_at(expected, map(i));
    if (a != e)
      why = std::string(name) + " not bitwise equal at " + where(name, i, actual.rank()) + ": " + hex(a) + " (" +
            exact(value_at(actual, i)) + ") vs " + hex(e) + " (" + exact(value_at(expected, map(i))) + ")" +
            kBitwiseNote;
  });
  return why;
}

std::string bitwise_mismatch(const char* name, const HostTensor& actual, const HostTensor& expected);

// |a - b| <= allowed at every element (equal infinities agree; NaN never does); the first element
// outside is the reason (empty when none).
std::string outside(const char* name, const HostTensor& a, const HostTensor& b, double allowed);

double max_abs(const HostTensor& t);

}  // namespace flashproof::properties
