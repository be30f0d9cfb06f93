// The host side of kernels/arch's warp-level wrappers (mma.h, ldmatrix.h): the hooks they declare
// in flashproof::arch::host. Each lane deposits its operands at the emulator's warp rendezvous
// (emu::warp_collective) and the last lane to arrive runs the pure warp-level model
// (mma_m16n8k16_warp, ldmatrix_warp). Library fp_arch: it depends on the emulator, the emulator not
// on it (docs/architecture.md, "Folders and what they may depend on").
#include <cstdint>

#include "kernels/arch/ldmatrix.h"
#include "kernels/arch/mma.h"
#include "kernels/emu/emulator.h"
#include "kernels/emu/source_site.h"

namespace flashproof::arch::host {
namespace {

constexpr std::uint32_t kFullWarp = 0xffffffffu;

struct MmaIn {
  MmaTag tag;
  MmaA a;
  MmaB b;
  MmaC c;
};

void mma_warp(const MmaIn* in, MmaC* out, std::uint32_t) {
  MmaA a[32];
  MmaB b[32];
  MmaC c[32];
  for (int l = 0; l < 32; ++l) {
    a[l] = in[l].a;
    b[l] = in[l].b;
    c[l] = in[l].c;
  }
  mma_m16n8k16_warp(in[0].tag, a, b, c, out);
}

struct LdmatrixIn {
  int count;
  bool trans;
  const void* row;
};

struct LdmatrixOut {
  std::uint32_t reg[4];
};

void ldmatrix_warp_checked(const LdmatrixIn* in, LdmatrixOut* out, std::uint32_t) {
  const std::uint16_t* rows[32] = {};
  const int addressing_lanes = 8 * in[0].count;
  for (int l = 0; l < addressing_lanes; ++l) {
    // Each addressed row is a 16-byte shared-memory read by the lane that supplied it.
    emu::check_smem(in[l].row, 16, false, static_cast<int>(emu::linear_thread_of_lane(l)));
    rows[l] = static_cast<const std::uint16_t*>(in[l].row);
  }
  std::uint32_t regs[32][4] = {};
  ldmatrix_warp(in[0].count, in[0].trans, rows, regs);
  for (int l = 0; l < 32; ++l) {
    for (int r = 0; r < 4; ++r) out[l].reg[r] = regs[l][r];
  }
}

}  // namespace

MmaC mma_m16n8k16_lane(MmaTag tag, const MmaA& a, const MmaB& b, const MmaC& c) {
  return emu::warp_collective<MmaIn, MmaC, mma_warp>("mma.m16n8k16", emu::SourceSite::current(), kFullWarp,
                                                     MmaIn{tag, a, b, c});
}

void ldmatrix_lane(int count, bool trans, const void* row_addr, std::uint32_t out[4]) {
  const LdmatrixOut r = emu::warp_collective<LdmatrixIn, LdmatrixOut, ldmatrix_warp_checked>(
      trans ? "ldmatrix.trans" : "ldmatrix", emu::SourceSite::current(), kFullWarp,
      LdmatrixIn{count, trans, row_addr});
  for (int i = 0; i < count; ++i) out[i] = r.reg[i];
}

}  // namespace flashproof::arch::host
