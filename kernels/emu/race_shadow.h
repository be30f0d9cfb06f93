// The race shadow of a block's dynamic shared memory: per byte, who last wrote and read it, in
// which barrier epoch, and at which warp epoch of the accessing warp (a completed warp collective
// orders the accesses of its lanes, as the .sync instructions do on the GPU). check_smem
// (race_shadow.cpp) reads and updates it. Internal to the emulator.
#pragma once

#include <cstdint>

namespace flashproof::emu::detail {

struct Shadow {
  std::uint32_t write_epoch = 0;
  std::uint32_t read_epoch = 0;
  std::uint32_t writer = 0;
  std::uint32_t reader = 0;       // kManyReaders when several threads read
  std::uint32_t reader_warp = 0;  // kManyWarps when readers came from several warps
  std::uint32_t writer_warp_epoch = 0;
  std::uint32_t reader_warp_epoch = 0;  // the latest, over all readers
  std::uint32_t copy_in_flight = 0;     // 1 + the thread whose cp.async to the byte has not landed
};
inline constexpr std::uint32_t kManyReaders = 0xffffffffu;
inline constexpr std::uint32_t kManyWarps = 0xffffffffu;

}  // namespace flashproof::emu::detail
