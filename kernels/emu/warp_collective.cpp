// The warp collectives (warp_collective_raw, emulator.h): each lane deposits its input at its
// warp's rendezvous and waits; the last lane to arrive computes every lane's output.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "kernels/emu/block.h"
#include "kernels/emu/diagnostics.h"
#include "kernels/emu/warp_rendezvous.h"

namespace flashproof::emu {

using namespace detail;

void warp_collective_raw(const char* kind, emu::SourceSite site, std::uint32_t mask, const void* in,
                         std::size_t in_bytes, void* out, std::size_t out_bytes, SlotCompute compute) {
  Block& b = block();
  Fiber& self = *b.current;
  const unsigned warp = self.linear / 32, lane = self.linear % 32;
  Rendezvous& r = b.warps[warp];
  const std::size_t threads = b.fibers.size();
  const std::size_t lanes_present = std::min<std::size_t>(32, threads - warp * 32);
  const std::uint32_t present = lanes_present == 32 ? 0xffffffffu : ((1u << lanes_present) - 1);
  // The messages are built only on the error paths: a stream costs more than the rendezvous.
  if (!((mask >> lane) & 1u)) {
    std::ostringstream os;
    os << kind << " at " << text(site) << " with mask 0x" << std::hex << mask << " that excludes the calling lane";
    fail(os.str());
  }
  if (mask & ~present) {
    std::ostringstream os;
    os << kind << " at " << text(site) << " with mask 0x" << std::hex << mask << " naming lanes the warp does not have";
    fail(os.str());
  }
  if (!r.open) {
    r = Rendezvous{};
    r.open = true;
    r.kind = kind;
    r.site = site;
    r.mask = mask;
  } else if (!same_text(r.kind, kind) || r.site.line() != site.line() ||
             !same_text(r.site.file_name(), site.file_name()) || r.mask != mask) {
    std::ostringstream os;
    os << "warp collective reached by a non-converged subset: the lane calls " << kind << " at " << text(site)
       << " while lanes of its warp wait at " << r.kind << " at " << text(r.site);
    fail(os.str());
  }
  std::memcpy(r.in + lane * kSlotBytes, in, in_bytes);
  r.arrived |= 1u << lane;
  if (r.arrived != r.mask) {
    self.wait = Wait::collective;
    self.site = site;
    self.kind = kind;
    block_yield();
  } else {
    compute(r.in, r.out, r.mask);
    ++b.warp_epochs[warp];
    // Each lane's output goes to its own fiber: the next collective may reopen r before the other
    // lanes resume.
    for (unsigned l = 0; l < 32; ++l) {
      if (!((r.mask >> l) & 1u)) continue;
      Fiber& f = b.fibers[warp * 32 + l];
      std::memcpy(f.result, r.out + l * kSlotBytes, kSlotBytes);
      f.wait = Wait::none;
    }
    r.open = false;
  }
  std::memcpy(out, self.result, out_bytes);
}

}  // namespace flashproof::emu
