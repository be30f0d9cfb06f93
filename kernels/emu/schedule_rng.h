// The seeded generator of an explored schedule (splitmix64: the same stream on every machine).
// Internal to the emulator.
#pragma once

#include <cstdint>

namespace flashproof::emu::detail {

struct ScheduleRng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // n > 0; the bias is irrelevant here
};

}  // namespace flashproof::emu::detail
