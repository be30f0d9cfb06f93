// Where the lanes of one warp meet for a warp collective (warp_collective.cpp): the open
// collective's kind, site and mask, the lanes arrived so far, and the lanes' input and output
// slots. Internal to the emulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include "kernels/emu/source_site.h"

#include "kernels/emu/emulator.h"

namespace flashproof::emu::detail {

struct Rendezvous {
  bool open = false;
  const char* kind = "";
  emu::SourceSite site;
  std::uint32_t mask = 0;
  std::uint32_t arrived = 0;
  std::byte in[32 * kSlotBytes]{};
  std::byte out[32 * kSlotBytes]{};
};

}  // namespace flashproof::emu::detail
