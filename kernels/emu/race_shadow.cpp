#include "kernels/emu/race_shadow.h"

#include <algorithm>
#include <sstream>
#include <string>

#include "kernels/emu/block.h"
#include "kernels/emu/diagnostics.h"

namespace flashproof::emu {

using namespace detail;

void check_smem(const void* p, std::size_t bytes, bool write, int thread) {
  Block& b = block();
  const unsigned t = thread < 0 ? b.current->linear : static_cast<unsigned>(thread);
  const auto* base = b.smem.data();
  const auto* at = static_cast<const std::byte*>(p);
  const char* verb = write ? "write" : "read";
  if (at < base || at + bytes > base + b.smem.size()) {
    std::ostringstream os;
    os << "shared-memory out-of-bounds " << verb << " of " << bytes << " bytes at offset " << (at - base)
       << " (dynamic shared memory is " << b.smem.size() << " bytes)";
    if (t != b.current->linear) os << " on behalf of " << thread_text(b, t);
    fail(os.str());
  }
  const std::size_t offset = static_cast<std::size_t>(at - base);
  const std::uint32_t warp = t / 32, warp_epoch = b.warp_epochs[warp];
  // An earlier access by another lane of this warp is ordered if a warp collective came between.
  const auto ordered = [&](std::uint32_t other_warp, std::uint32_t other_warp_epoch) {
    return other_warp == warp && other_warp_epoch < warp_epoch;
  };
  for (std::size_t i = offset; i < offset + bytes; ++i) {
    Shadow& s = b.shadow[i];
    std::string conflict;
    if (s.copy_in_flight != 0) {
      std::ostringstream os;
      os << "shared-memory race: " << thread_text(b, t) << " " << verb << "s offset " << i << " while the cp.async of "
         << thread_text(b, s.copy_in_flight - 1) << " to it is in flight (missing cp.async.wait_group?)";
      fail(os.str());
    }
    if (s.write_epoch == b.epoch && s.writer != t && !ordered(s.writer / 32, s.writer_warp_epoch)) {
      conflict = "written by " + thread_text(b, s.writer);
    } else if (write && s.read_epoch == b.epoch && s.reader != t && !ordered(s.reader_warp, s.reader_warp_epoch)) {
      conflict = s.reader == kManyReaders ? std::string("read by other threads") : "read by " + thread_text(b, s.reader);
    }
    if (!conflict.empty()) {
      std::ostringstream os;
      os << "shared-memory race: " << thread_text(b, t) << " " << verb << "s offset " << i << ", " << conflict
         << " since the last __syncthreads (missing barrier?)";
      fail(os.str());
    }
    if (write) {
      s.write_epoch = b.epoch;
      s.writer = t;
      s.writer_warp_epoch = warp_epoch;
    } else if (s.read_epoch != b.epoch) {
      s.read_epoch = b.epoch;
      s.reader = t;
      s.reader_warp = warp;
      s.reader_warp_epoch = warp_epoch;
    } else if (s.reader != t) {
      s.reader = kManyReaders;
      if (s.reader_warp != warp) s.reader_warp = kManyWarps;
      s.reader_warp_epoch = std::max(s.reader_warp_epoch, warp_epoch);
    }
  }
}

}  // namespace flashproof::emu
