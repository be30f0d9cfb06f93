// The FA2 decode path's test cases (KV caches, paged K/V, split-KV; docs/fa2.md "Decoding") and
// their check, shared by the emulated test (test_fa2_decode.cpp) and the GPU one
// (test_fa2_decode_gpu.cpp): inputs written into the cache through the block table with NaN in every
// unused slot and page, O and LSE poisoned with NaN before the call, and every output compared with
// a double-precision computation of the logical attention (the used keys gathered through the
// table, the mask aligned to each sequence's used length).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/attention_impl.h"
#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof::decode_tests {

struct DecodeCase {
  std::string label;
  DType dtype = DType::fp16;
  std::int64_t batch = 1, heads_q = 1, heads_kv = 1, seqlen_q = 1, capacity = 128, head_dim = 64;
  std::int64_t window_left = -1, window_right = -1;
  std::vector<std::int64_t> lens;  // empty: every sequence uses the capacity
  std::int64_t page_size = 0;      // 0: contiguous
  enum class Pages { in_order, permuted, shared } pages = Pages::in_order;
  std::int64_t spare_pages = 0;  // pages in the pool no sequence uses (NaN)
  std::int64_t num_splits = 0;
  std::uint32_t seed = 1;
};

// gtest prints a case by its label.
inline void PrintTo(const DecodeCase& c, std::ostream* os) { *os << c.label; }

inline Problem problem_of(const DecodeCase& c) {
  Problem p;
  p.dtype = c.dtype;
  p.batch = c.batch, p.heads_q = c.heads_q, p.heads_kv = c.heads_kv;
  p.seqlen_q = c.seqlen_q, p.seqlen_k = c.capacity, p.head_dim = c.head_dim;
  p.window_left = c.window_left, p.window_right = c.window_right;
  p.cache_seqlens = c.lens;
  p.num_splits = c.num_splits;
  if (c.page_size > 0) {
    p.page_size = c.page_size;
    const std::int64_t per = c.capacity / c.page_size;
    // Shared: every sequence's first page is page 0 (its slots hold the first sequence's keys, so
    // every sequence reads the same keys there).
    const std::int64_t distinct = c.pages == DecodeCase::Pages::shared ? c.batch * (per - 1) + 1 : c.batch * per;
    p.num_pages = distinct + c.spare_pages;
    std::vector<std::int64_t> order(static_cast<std::size_t>(p.num_pages));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
    if (c.pages != DecodeCase::Pages::in_order) std::shuffle(order.begin(), order.end(), std::mt19937(c.seed + 7));
    std::int64_t next = 0;
    for (std::int64_t b = 0; b < c.batch; ++b)
      for (std::int64_t j = 0; j < per; ++j)
        p.block_table.push_back(c.pages == DecodeCase::Pages::shared && j == 0 ? order[0]
                                : order[static_cast<std::size_t>(c.pages == DecodeCase::Pages::shared ? ++next : next++)]);
  }
  return p;
}

// (outer index, row) of sequence b's key j in the cache as the implementation receives it.
inline std::pair<std::int64_t, std::int64_t> cache_slot(const Problem& p, std::int64_t b, std::int64_t j) {
  if (!p.paged()) return {b, j};
  return {p.block_table[static_cast<std::size_t>(b * p.pages_per_sequence() + j / p.page_size)], j % p.page_size};
}

struct DecodeInputs {
  HostTensor q, k, v;
};

// Q random; K and V NaN everywhere but the used slots of each sequence, written through the table.
inline DecodeInputs decode_inputs(const Problem& p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  DecodeInputs in{HostTensor(p.dtype, p.q_shape()), HostTensor(p.dtype, p.kv_shape()), HostTensor(p.dtype, p.kv_shape())};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Shape ks = p.kv_shape();
  for (std::int64_t a = 0; a < ks[0]; ++a)
    for (std::int64_t r = 0; r < ks[1]; ++r)
      for (std::int64_t h = 0; h < ks[2]; ++h)
        for (std::int64_t d = 0; d < ks[3]; ++d) in.k.set(a, r, h, d, nan), in.v.set(a, r, h, d, nan);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t d = 0; d < p.head_dim; ++d) in.q.set(b, i, h, d, 2.0 * uni(rng));
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t j = 0; j < p.used_keys(b); ++j) {
      const auto [outer, row] = cache_slot(p, b, j);
      for (std::int64_t h = 0; h < p.heads_kv; ++h) {
        if (!std::isnan(in.k.get(outer, row, h, 0))) continue;  // a shared page's slot, already written
        for (std::int64_t d = 0; d < p.head_dim; ++d) in.k.set(outer, row, h, d, uni(rng)), in.v.set(outer, row, h, d, uni(rng));
      }
    }
  return in;
}


struct Reference {
  std::vector<double> o;    // [b][sq][hq][d]
  std::vector<double> lse;  // [b][hq][sq]
};

inline Reference reference(const Problem& p, const DecodeInputs& in) {
  Reference r;
  r.o.assign(static_cast<std::size_t>(p.batch * p.seqlen_q * p.heads_q * p.head_dim), 0.0);
  r.lse.assign(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 0.0);
  const double scale = p.softmax_scale();
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t used = p.used_keys(b), offset = used - p.seqlen_q;
    for (std::int64_t h = 0; h < p.heads_q; ++h) {
      const std::int64_t kh = p.kv_head(h);
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        std::vector<double> s;
        std::vector<std::int64_t> keys;
        for (std::int64_t j = 0; j < used; ++j) {
          if (p.window_left >= 0 && j < i + offset - p.window_left) continue;
          if (p.window_right >= 0 && j > i + offset + p.window_right) continue;
          const auto [outer, row] = cache_slot(p, b, j);
          double dot = 0;
          for (std::int64_t d = 0; d < p.head_dim; ++d) dot += in.q.get(b, i, h, d) * in.k.get(outer, row, kh, d);
          s.push_back(dot * scale);
          keys.push_back(j);
        }
        const std::size_t li = static_cast<std::size_t>((b * p.heads_q + h) * p.seqlen_q + i);
        if (s.empty()) {
          r.lse[li] = std::numeric_limits<double>::infinity();
          continue;
        }
        const double m = *std::max_element(s.begin(), s.end());
        double l = 0;
        for (double x : s) l += std::exp(x - m);
        r.lse[li] = m + std::log(l);
        for (std::size_t n = 0; n < s.size(); ++n) {
          const auto [outer, row] = cache_slot(p, b, keys[n]);
          const double w = std::exp(s[n] - m) / l;
          for (std::int64_t d = 0; d < p.head_dim; ++d)
            r.o[static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + d)] += w * in.v.get(outer, row, kh, d);
        }
      }
    }
  }
  return r;
}

struct Outputs {
  HostTensor o, lse;
};

// Runs impl's forward with O and LSE poisoned (NaN).
inline Outputs run_decode(AttentionImpl& impl, const Problem& p, const DecodeInputs& in) {
  Outputs out{HostTensor(p.dtype, p.q_shape()), HostTensor(DType::fp32, p.lse_shape(), 3)};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h) {
        out.lse.set(b, h, i, 0, nan);
        for (std::int64_t d = 0; d < p.head_dim; ++d) out.o.set(b, i, h, d, nan);
      }
  impl.forward(p, {in.q, in.k, in.v, out.o, out.lse});
  return out;
}

// The unit roundoff of the inputs' type: fp16 2^-11, bf16 2^-8.
inline double input_roundoff(DType t) { return t == DType::bf16 ? 0x1p-8 : 0x1p-11; }

// Tolerances derived from the dtype: O's error is P rounded to the input type (u per weight, at most
// u max|V| over the row) and O's own rounding (u |O|), under 4 u max|V| with |V| <= 1; LSE is fp32
// arithmetic on exact products, within 1e-4 (|LSE| < 20 here).
struct Comparison {
  double worst_o_ratio = 0, worst_lse = 0;  // max |error| / tolerance over O, max |error| over LSE
  std::int64_t bad = 0;                     // elements outside tolerance (NaN included)
  std::string first;
};

inline Comparison compare(const Problem& p, const Outputs& out, const Reference& r) {
  Comparison c;
  const double tol_o = 4 * input_roundoff(p.dtype), tol_lse = 1e-4;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        const double want_lse = r.lse[static_cast<std::size_t>((b * p.heads_q + h) * p.seqlen_q + i)];
        const double got_lse = out.lse.get(b, h, i);
        const bool lse_ok = std::isinf(want_lse) ? got_lse == want_lse : std::fabs(got_lse - want_lse) <= tol_lse;
        if (!std::isinf(want_lse)) c.worst_lse = std::max(c.worst_lse, std::isnan(got_lse) ? 1e300 : std::fabs(got_lse - want_lse));
        if (!lse_ok && c.bad++ == 0)
          c.first = "lse b" + std::to_string(b) + " h" + std::to_string(h) + " i" + std::to_string(i) + ": " +
                    std::to_string(got_lse) + " vs " + std::to_string(want_lse);
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const double want = r.o[static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + d)];
          const double got = out.o.get(b, i, h, d);
          const double ratio = std::isnan(got) ? 1e300 : std::fabs(got - want) / tol_o;
          c.worst_o_ratio = std::max(c.worst_o_ratio, ratio);
          if (!(ratio <= 1) && c.bad++ == 0)
            c.first = "o b" + std::to_string(b) + " i" + std::to_string(i) + " h" + std::to_string(h) + " d" +
                      std::to_string(d) + ": " + std::to_string(got) + " vs " + std::to_string(want);
        }
      }
  return c;
}

// The cases: cache lengths 0, 1, at and around page and tile edges; page sizes 16, 48 and 256;
// pages permuted and shared, spare NaN pages; splits heuristic and forced; GQA; causal and a
// window with seqlen_q > 1; d 64 and 128 (and 40, padded by the adapter), fp16 and bf16.
inline std::vector<DecodeCase> decode_cases() {
  using P = DecodeCase::Pages;
  std::vector<DecodeCase> v;
  auto add = [&](DecodeCase c) { v.push_back(std::move(c)); };
  add({.label = "contiguous_lengths_0_1_128_300_heuristic", .batch = 4, .heads_q = 2, .capacity = 300,
       .lens = {0, 1, 128, 300}});
  add({.label = "contiguous_full_gqa_split2", .batch = 1, .heads_q = 4, .heads_kv = 2, .capacity = 200,
       .lens = {200}, .num_splits = 2});
  add({.label = "paged16_permuted_gqa_page_edges", .batch = 4, .heads_q = 4, .heads_kv = 2, .capacity = 160,
       .lens = {16, 17, 15, 160}, .page_size = 16, .pages = P::permuted, .spare_pages = 3, .seed = 2});
  add({.label = "paged48_shared_bf16_d128_causal_split3", .dtype = DType::bf16, .batch = 2, .heads_q = 2,
       .heads_kv = 2, .seqlen_q = 3, .capacity = 192, .head_dim = 128, .window_left = -1, .window_right = 0,
       .lens = {95, 150}, .page_size = 48, .pages = P::shared, .spare_pages = 1, .num_splits = 3, .seed = 3});
  add({.label = "paged256_bf16_causal_tile_edges_split2", .dtype = DType::bf16, .batch = 2, .seqlen_q = 4,
       .capacity = 512, .window_left = -1, .window_right = 0, .lens = {129, 257}, .page_size = 256,
       .pages = P::permuted, .spare_pages = 1, .num_splits = 2, .seed = 4});
  add({.label = "contiguous_window_early_splits_empty", .batch = 2, .seqlen_q = 2, .capacity = 384,
       .window_left = 40, .window_right = 0, .lens = {383, 64}, .num_splits = 3, .seed = 5});
  add({.label = "paged32_d40_sq16_causal_heuristic", .batch = 2, .heads_q = 2, .heads_kv = 1, .seqlen_q = 16,
       .capacity = 256, .head_dim = 40, .window_left = -1, .window_right = 0, .lens = {16, 200}, .page_size = 32,
       .pages = P::permuted, .seed = 6});
  add({.label = "d128_fp16_length_64_65_split_more_than_blocks", .batch = 2, .capacity = 128, .head_dim = 128,
       .lens = {64, 65}, .num_splits = 5, .seed = 8});
  return v;
}

// The split sweep's problem: 4 key blocks of 128 at d 64 in the longer sequence.
inline DecodeCase sweep_case(std::int64_t splits) {
  return {.label = "sweep", .batch = 2, .seqlen_q = 2, .capacity = 512, .window_left = -1, .window_right = 0,
          .lens = {511, 300}, .page_size = 64, .pages = DecodeCase::Pages::permuted, .spare_pages = 1,
          .num_splits = splits, .seed = 9};
}

}  // namespace flashproof::decode_tests
