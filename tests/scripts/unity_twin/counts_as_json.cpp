// The twin's other file (not compiled): a count meant to stay a number.
#include <cstddef>

namespace {

template <class N>
long long count(N n) {
  return static_cast<long long>(n);
}

}  // namespace

long long record_count(std::size_t n) { return count(n); }
