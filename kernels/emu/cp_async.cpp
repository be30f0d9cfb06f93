// cp.async on the host (kernels/arch/cp_async.h): synchronous under the default schedule; under an
// explored one each copy stays in flight, its bytes marked in the race shadow, until its thread's
// cp_async_wait covers its group.
#include <cstring>

#include "kernels/emu/block.h"

namespace flashproof::emu {

using namespace detail;

namespace {

// Lands a cp.async: its bytes stop being in flight and are written, by its thread, now.
void land(Block& b, unsigned thread, const CopyInFlight& c) {
  const std::size_t offset = static_cast<std::size_t>(c.dst - b.smem.data());
  for (std::size_t i = offset; i < offset + 16; ++i) b.shadow[i].copy_in_flight = 0;
  check_smem(c.dst, 16, true, static_cast<int>(thread));
  if (c.valid)
    std::memcpy(c.dst, c.src, 16);
  else
    std::memset(c.dst, 0, 16);
}

}  // namespace

void cp_async_copy(void* smem_dst, const void* global_src, bool valid) {
  schedule_point();
  check_smem(smem_dst, 16, true);
  Block& b = block();
  if (b.rng == nullptr) {  // the default schedule: synchronous
    if (valid)
      std::memcpy(smem_dst, global_src, 16);
    else
      std::memset(smem_dst, 0, 16);
    return;
  }
  Fiber& f = *b.current;
  auto* dst = static_cast<std::byte*>(smem_dst);
  const std::size_t offset = static_cast<std::size_t>(dst - b.smem.data());
  for (std::size_t i = offset; i < offset + 16; ++i) b.shadow[i].copy_in_flight = f.linear + 1;
  f.copies.push_back({dst, global_src, valid, f.groups_committed});
}

void cp_async_commit() {
  Block& b = block();
  if (b.rng != nullptr) ++b.current->groups_committed;
}

void cp_async_wait(int pending) {
  Block& b = block();
  if (b.rng == nullptr) return;
  Fiber& f = *b.current;
  const int landed_below = f.groups_committed - pending;  // groups before this one have landed
  std::size_t kept = 0;
  for (const CopyInFlight& c : f.copies) {
    if (c.group < landed_below)
      land(b, f.linear, c);
    else
      f.copies[kept++] = c;
  }
  f.copies.resize(kept);
}

}  // namespace flashproof::emu
