// bench_flash's decode rows (`--directions decode`; docs/fa2.md "Decoding"): FA2's decode path
// through fa2_forward with a paged KV cache, one query token, 32 query and 8 KV heads, d 128,
// batches 1 to 64, caches 1k to 128k keys (every sequence's cache full), pages of 16 and 256 keys in
// a shuffled block table, the split count left to the heuristic. Beside each time: the K/V bytes
// the call must read, the bandwidth that implies, and the static read count of its thread blocks
// (kernels::fa2_decode_reads: the fraction of the cache's used bytes read exactly once). --tiny:
// batches 1 and 2, caches 256 and 1024, 4 query and 2 KV heads, pages of 16, for the emulator;
// --decode-batches and --decode-caches choose other batches and cache lengths (multiples of 256).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/flash_bench_options.h"
#include "bench/flash_bench_timing.h"
#include "core/dtype.h"
#include "core/rng.h"
#include "kernels/fa2/api.h"

namespace flashproof::bench {

struct DecodeShape {
  int batch = 1, cache = 1024, page = 16, heads_q = 32, heads_kv = 8, head_dim = 128;
  std::size_t pages() const { return static_cast<std::size_t>(batch) * (cache / page); }
  // K and V of every used key: what a decode step must read at least once.
  double kv_bytes() const { return 2.0 * 2.0 * batch * static_cast<double>(cache) * heads_kv * head_dim; }
};

struct DecodeRow {
  kernels::FlashDtype dtype = kernels::FlashDtype::fp16;
  DecodeShape shape;
  std::string status = "ok", reason;  // ok, failed, planned
  TimeStats time;
  kernels::Fa2DecodeReads reads;
  double gb_per_s() const { return shape.kv_bytes() / (time.median_ms * 1e-3) / 1e9; }
};

inline std::vector<DecodeShape> decode_shapes(const BenchOptions& o) {
  const bool tiny = o.tiny;
  std::vector<DecodeShape> shapes;
  const std::vector<int> batches = !o.decode_batches.empty() ? o.decode_batches
                                   : tiny                     ? std::vector<int>{1, 2}
                                                              : std::vector<int>{1, 4, 16, 64};
  const std::vector<int> caches = !o.decode_caches.empty() ? o.decode_caches
                                  : tiny                    ? std::vector<int>{256, 1024}
                                                            : std::vector<int>{1024, 4096, 16384, 32768, 65536, 131072};
  const std::vector<int> pages = tiny ? std::vector<int>{16} : std::vector<int>{16, 256};
  for (int page : pages)
    for (int cache : caches)
      for (int batch : batches) {
        DecodeShape s{batch, cache, page};
        if (tiny) s.heads_q = 4, s.heads_kv = 2;
        shapes.push_back(s);
      }
  return shapes;
}

inline kernels::Fa2DecodeReads decode_reads(const DecodeShape& s) {
  const std::vector<std::int32_t> used(static_cast<std::size_t>(s.batch), s.cache);
  return kernels::fa2_decode_reads(s.heads_q, s.heads_kv, 1, s.head_dim, -1, -1, used, 0);
}

// Every row of every dtype, timed by `time` (bench_flash's warm-up and Google Benchmark runs); each
// row's O and LSE are poisoned first and checked written after. dry_run: the rows and their static
// read counts only.
inline std::vector<DecodeRow> run_decode_rows(const BenchOptions& o,
                                              const std::function<TimeStats(const std::function<void()>&)>& time,
                                              bool dry_run) {
  using kernels::FlashBuffer;
  std::vector<DecodeRow> rows;
  for (kernels::FlashDtype dtype : o.dtypes)
    for (const DecodeShape& s : decode_shapes(o)) {
      DecodeRow r;
      r.dtype = dtype, r.shape = s, r.reads = decode_reads(s);
      if (dry_run) {
        r.status = "planned";
        rows.push_back(r);
        continue;
      }
      try {
        const std::int64_t d = s.head_dim, hq = s.heads_q, hkv = s.heads_kv, page = s.page;
        const std::size_t pool = s.pages() * static_cast<std::size_t>(page * hkv * d);
        const std::size_t q_elems = static_cast<std::size_t>(s.batch * hq * d), rows_lse = static_cast<std::size_t>(s.batch * hq);
        FlashBuffer q(o.target, q_elems * 2), k(o.target, pool * 2), v(o.target, pool * 2), out(o.target, q_elems * 2),
            lse(o.target, rows_lse * sizeof(float));
        Rng rng(derive(o.seed, static_cast<std::uint64_t>(rows.size())));
        // Random normal values; a cache of billions of elements repeats a block of 2^20 of them
        // (what a decode step costs does not depend on the values).
        std::vector<std::uint16_t> block(std::size_t{1} << 20);
        for (std::uint16_t& x : block)
          x = dtype == kernels::FlashDtype::fp16 ? double_to_fp16_bits(rng.normal()) : double_to_bf16_bits(rng.normal());
        auto fill = [&](FlashBuffer& b, std::size_t n) {
          std::vector<std::uint16_t> bits(n);
          for (std::size_t at = 0; at < n; at += block.size())
            std::copy_n(block.begin(), std::min(block.size(), n - at), bits.begin() + static_cast<std::ptrdiff_t>(at));
          b.upload(bits.data(), n * 2);
        };
        fill(q, q_elems), fill(k, pool), fill(v, pool);
        // A shuffled table, as an allocator's pages come: a seeded permutation of the pool.
        std::vector<std::int32_t> table(s.pages());
        std::iota(table.begin(), table.end(), 0);
        for (std::size_t x = table.size(); x > 1; --x) std::swap(table[x - 1], table[rng.below(x)]);
        const std::vector<std::int32_t> lengths(static_cast<std::size_t>(s.batch), s.cache);
        kernels::FlashOptions options;
        options.cache_seqlens = lengths, options.page_size = s.page, options.block_table = table;
        const std::int64_t pages = static_cast<std::int64_t>(s.pages());
        const kernels::FlashForwardTensors t{
            {q.data(), {s.batch, 1, hq, d}, {hq * d, hq * d, d, 1}},
            {k.data(), {pages, page, hkv, d}, {page * hkv * d, hkv * d, d, 1}},
            {v.data(), {pages, page, hkv, d}, {page * hkv * d, hkv * d, d, 1}},
            {out.data(), {s.batch, 1, hq, d}, {hq * d, hq * d, d, 1}},
            static_cast<float*>(lse.data())};
        const std::vector<unsigned char> ones(q_elems * 2, 0xFF);
        out.upload(ones.data(), q_elems * 2);
        const std::vector<unsigned char> ones_lse(rows_lse * sizeof(float), 0xFF);
        lse.upload(ones_lse.data(), ones_lse.size());
        r.time = time([&] { kernels::fa2_forward(o.target, dtype, t, options); });
        std::vector<std::uint16_t> o_bits(q_elems);
        out.download(o_bits.data(), q_elems * 2);
        std::vector<float> lse_values(rows_lse);
        lse.download(lse_values.data(), rows_lse * sizeof(float));
        const std::uint16_t exponent = dtype == kernels::FlashDtype::fp16 ? 0x7C00 : 0x7F80;
        const auto bad_o = std::count_if(o_bits.begin(), o_bits.end(), [&](std::uint16_t x) { return (x & exponent) == exponent; });
        const auto bad_lse = std::count_if(lse_values.begin(), lse_values.end(), [](float x) { return !std::isfinite(x); });
        if (bad_o + bad_lse > 0)
          throw std::runtime_error(std::to_string(bad_o) + " O and " + std::to_string(bad_lse) +
                                   " LSE elements not finite (unwritten or NaN) after the runs");
      } catch (const std::exception& e) {
        r.status = "failed", r.reason = e.what();
      }
      rows.push_back(r);
    }
  return rows;
}

inline void print_decode_table(const std::vector<DecodeRow>& rows) {
  std::printf("\n%-5s %5s %7s %5s %3s/%-3s %4s %6s %9s %11s %7s %8s %9s %9s\n", "dtype", "batch", "cache", "page", "hq",
              "hkv", "hdim", "splits", "KV_MB", "median_ms", "spread", "GB/s", "read_once", "reads/key");
  for (const DecodeRow& r : rows) {
    const DecodeShape& s = r.shape;
    std::printf("%-5s %5d %7d %5d %3d/%-3d %4d %6d %9.1f ", r.dtype == kernels::FlashDtype::fp16 ? "fp16" : "bf16", s.batch,
                s.cache, s.page, s.heads_q, s.heads_kv, s.head_dim, r.reads.num_splits, s.kv_bytes() / 1e6);
    if (r.status == "ok")
      std::printf("%11.4f %6.1f%% %8.1f ", r.time.median_ms, r.time.spread_pct, r.gb_per_s());
    else
      std::printf("%11s %7s %8s ", r.status.c_str(), "", "");
    std::printf("%8.1f%% %9.3f\n", 100 * r.reads.read_once, r.reads.reads_per_key);
  }
}

}  // namespace flashproof::bench
