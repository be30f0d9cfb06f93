// The one rule for appended keys in a paged KV cache (docs/spec.md "KV caches"): a page that receives
// a sequence's appended keys must be mapped by no other used table entry, or the appends (and the
// other reader's keys) would depend on the order of the writes. Shared by Problem::validate and the
// flash APIs' checks (kernels/flash/validate.cpp). Standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace flashproof {

struct SharedAppendedPage {
  std::int64_t sequence = -1, page = -1;  // -1: none
};

// table: batch x per_sequence entries (row-major); stored(b): sequence b's keys before the append.
// Only the receiving pages are counted (a few per sequence), over one pass of the used entries.
template <class Table, class Stored>
SharedAppendedPage shared_appended_page(const Table& table, std::int64_t batch, std::int64_t per_sequence,
                                        std::int64_t page_size, std::int64_t appended, Stored&& stored) {
  std::unordered_map<std::int64_t, std::int64_t> uses;  // receiving page -> used entries mapping it
  const auto entry = [&](std::int64_t b, std::int64_t x) {
    return static_cast<std::int64_t>(table[static_cast<std::size_t>(b * per_sequence + x)]);
  };
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t x = stored(b) / page_size; x * page_size < stored(b) + appended; ++x) uses[entry(b, x)] = 0;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t x = 0; x * page_size < stored(b) + appended; ++x)
      if (const auto at = uses.find(entry(b, x)); at != uses.end()) ++at->second;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t x = stored(b) / page_size; x * page_size < stored(b) + appended; ++x)
      if (uses[entry(b, x)] > 1) return {b, entry(b, x)};
  return {};
}

}  // namespace flashproof
