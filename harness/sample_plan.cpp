#include "harness/sample_plan.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/rng.h"
#include "kernels/algo/row_keys.h"
#include "kernels/algo/tile_configs.h"

namespace flashproof {
namespace {

using Positions = std::set<std::int64_t>;

void add_near(Positions& at, std::int64_t x, std::int64_t n) {
  for (std::int64_t y = x - 1; y <= x + 1; ++y)
    if (y >= 0 && y < n) at.insert(y);
}

// Every block size the kernels tile this axis with (shipped and alternate shapes), and the
// random groups' 128.
std::set<std::int64_t> block_sizes(bool query_axis) {
  std::set<std::int64_t> sizes{128};
  for (const algo::TileConfig& t : algo::kTileConfigs) sizes.insert(query_axis ? t.block_m : t.block_n);
  return sizes;
}

// Positions along one axis of length n where bugs sit (see the header), mask edges excluded.
Positions axis_positions(std::int64_t n, bool query_axis) {
  Positions at;
  for (std::int64_t x : {std::int64_t{0}, std::int64_t{1}, n - 2, n - 1})
    if (x >= 0 && x < n) at.insert(x);
  for (std::int64_t size : block_sizes(query_axis)) {
    const std::int64_t tiles = (n + size - 1) / size;
    for (std::int64_t t : {std::int64_t{0}, std::int64_t{1}, tiles - 2, tiles - 1}) {
      if (t < 0 || t >= tiles) continue;
      at.insert(t * size);
      at.insert(std::min(n - 1, t * size + size - 1));
    }
  }
  for (std::int64_t limit : {std::int64_t{1} << 15, std::int64_t{1} << 16}) add_near(at, limit, n);
  return at;
}

// The mask's edges along the query axis: the rows around those where the first visible key
// leaves 0, the last visible key leaves seqlen_k - 1, and where visibility starts and ends.
Positions query_mask_edges(const Problem& p) {
  Positions at;
  const std::int64_t off = p.mask_offset(), wl = p.window_left, wr = p.window_right, n = p.seqlen_q;
  if (wl >= 0) {
    add_near(at, wl - off, n);                    // first visible key leaves 0
    add_near(at, p.seqlen_k - 1 - off + wl, n);  // the last row that sees a key
    add_near(at, p.seqlen_k - off + wl, n);      // the first that sees none
  }
  if (wr >= 0) {
    add_near(at, -off - wr, n);                 // the first row that sees a key
    add_near(at, -off - wr - 1, n);             // the last that sees none
    add_near(at, p.seqlen_k - 1 - off - wr, n);  // last visible key reaches seqlen_k - 1
  }
  return at;
}

// The same along the key axis: key j is seen by rows j - off - wr .. j - off + wl.
Positions key_mask_edges(const Problem& p) {
  Positions at;
  const std::int64_t off = p.mask_offset(), wl = p.window_left, wr = p.window_right, n = p.seqlen_k;
  if (wr >= 0) {
    add_near(at, off + wr, n);                 // first seeing row reaches 0
    add_near(at, p.seqlen_q - 1 + off + wr, n);  // the last key any row sees
    add_near(at, p.seqlen_q + off + wr, n);
  }
  if (wl >= 0) {
    add_near(at, off - wl, n);  // the first key any row sees
    add_near(at, off - wl - 1, n);
    add_near(at, p.seqlen_q - 1 + off - wl, n);  // last seeing row reaches seqlen_q - 1
  }
  return at;
}

// A packed batch: every sequence's own positions (its ends, its tiles' edges, its mask's edges),
// at its storage rows; the kernels tile each sequence from its first row.
Positions packed_positions(const Problem& p, bool query_axis) {
  Positions at;
  const algo::RowKeys keys(p);
  for (std::int64_t b = 0; b < keys.sequences(); ++b) {
    const algo::SequenceSpan<std::int64_t> s = keys.sequence(b);
    const std::int64_t n = query_axis ? s.seqlen_q : s.seqlen_k, begin = query_axis ? s.q_begin : s.k_begin;
    if (n == 0 || (query_axis ? s.seqlen_k : s.seqlen_q) == 0) {
      if (n > 0) at.insert({begin, begin + n - 1});  // rows that see nothing, keys no row sees
      continue;
    }
    Problem one = p;
    one.cu_seqlens_q.clear(), one.cu_seqlens_k.clear();
    one.seqlen_q = s.seqlen_q, one.seqlen_k = s.seqlen_k;
    Positions local = axis_positions(n, query_axis);
    local.merge(query_axis ? query_mask_edges(one) : key_mask_edges(one));
    for (std::int64_t x : local) at.insert(begin + x);
  }
  return at;
}

// One axis of the sample: rows [batch][heads][n] (mask order) with tensors laid out
// [batch][n][heads][head_dim].
struct Axis {
  std::int64_t batch, heads, n, head_dim;
  std::vector<std::uint8_t> mask;
  std::int64_t structured = 0;

  std::int64_t flat(std::int64_t b, std::int64_t h, std::int64_t x) const { return (b * heads + h) * n + x; }
  std::int64_t size() const { return batch * heads * n; }
  void set(std::int64_t b, std::int64_t h, std::int64_t x) { mask[static_cast<std::size_t>(flat(b, h, x))] = 1; }

  void structured_part(const Positions& positions) {
    mask.assign(static_cast<std::size_t>(size()), 0);
    for (std::int64_t x : positions) {
      set(0, 0, x);
      set(batch - 1, heads - 1, x);
    }
    // Heads inside a GQA group (a wrong head mapping can spare the first and the last): the ends
    // and the middle of heads 1 and heads / 2.
    for (std::int64_t h : {std::int64_t{1}, heads / 2})
      if (h < heads)
        for (std::int64_t x : {std::int64_t{0}, n / 2, n - 1}) set(0, h, x);
    // (batch, head) pairs whose linear index crosses a 16-bit limit (grid dimensions): their ends.
    for (std::int64_t limit : {std::int64_t{1} << 15, std::int64_t{1} << 16})
      for (std::int64_t bh = limit - 1; bh <= limit; ++bh)
        if (bh < batch * heads)
          for (std::int64_t x : {std::int64_t{0}, n - 1}) set(bh / heads, bh % heads, x);
    // Rows whose first element, in the tensor's layout or in the mask's, crosses 2^k.
    for (int k : {15, 16, 31, 32}) {
      const std::int64_t limit = std::int64_t{1} << k;
      for (std::int64_t r = limit / head_dim - 1; r <= limit / head_dim + 1; ++r)
        if (r >= 0 && r < size()) set(r / (n * heads), r % heads, (r / heads) % n);  // [b][n][h] order
      for (std::int64_t r = limit - 1; r <= limit; ++r)
        if (r < size()) mask[static_cast<std::size_t>(r)] = 1;  // [b][h][n] order (LSE)
    }
    structured = std::count(mask.begin(), mask.end(), std::uint8_t{1});
  }

  // `count` random positions in groups of up to 8 inside random 128-aligned runs.
  std::int64_t random_part(std::int64_t count, Rng& rng) {
    constexpr std::int64_t kRun = 128, kGroup = 8;
    const std::int64_t runs = (n + kRun - 1) / kRun;
    std::int64_t added = 0;
    for (std::int64_t g = 0; g < (count + kGroup - 1) / kGroup; ++g) {
      const std::int64_t bh = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(batch * heads)));
      const std::int64_t run = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(runs)));
      const std::int64_t width = std::min(kRun, n - run * kRun);
      for (std::int64_t t = 0; t < std::min(kGroup, count - g * kGroup); ++t) {
        const std::int64_t x = run * kRun + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(width)));
        std::uint8_t& m = mask[static_cast<std::size_t>(flat(bh / heads, bh % heads, x))];
        added += m == 0;
        m = 1;
      }
    }
    return added;
  }
};

std::string describe(const char* what, const Axis& a, std::int64_t random) {
  const std::int64_t chosen = std::count(a.mask.begin(), a.mask.end(), std::uint8_t{1});
  return std::to_string(chosen) + " of " + std::to_string(a.size()) + " " + what + " (" +
         std::to_string(a.structured) + " structured, " + std::to_string(random) + " more at random)";
}

}  // namespace

SamplePlan plan_sample(const Problem& p, std::int64_t random_count, std::uint64_t seed) {
  SamplePlan plan;
  Axis rows{p.batch, p.heads_q, p.seqlen_q, p.head_dim, {}};
  Axis cols{p.batch, p.heads_kv, p.seqlen_k, p.head_dim, {}};
  Positions row_at = axis_positions(p.seqlen_q, true), col_at = axis_positions(p.seqlen_k, false);
  row_at.merge(p.packed() ? packed_positions(p, true) : query_mask_edges(p));
  col_at.merge(p.packed() ? packed_positions(p, false) : key_mask_edges(p));
  rows.structured_part(row_at);
  cols.structured_part(col_at);
  const bool covers = random_count >= rows.size() - rows.structured && random_count >= cols.size() - cols.structured;
  if (random_count <= 0 || covers) {
    plan.full = true;
    plan.sample.rows.assign(static_cast<std::size_t>(rows.size()), 1);
    plan.sample.cols.assign(static_cast<std::size_t>(cols.size()), 1);
    plan.sample.description = "all";
    return plan;
  }
  Rng rng(derive(seed, 0x5a4d91e));
  const std::int64_t random_rows = rows.random_part(random_count, rng);
  const std::int64_t random_cols = cols.random_part(random_count, rng);
  plan.sample.structured_rows = rows.structured;
  plan.sample.structured_cols = cols.structured;
  plan.sample.description = describe("query rows", rows, random_rows) + ", " +
                            describe("key columns", cols, random_cols) + "; seed " + std::to_string(seed);
  plan.sample.rows = std::move(rows.mask);
  plan.sample.cols = std::move(cols.mask);
  return plan;
}

std::optional<OutputSample> judged_sample(const Problem& p, std::int64_t random_count, std::uint64_t seed) {
  if (random_count <= 0) return std::nullopt;
  SamplePlan plan = plan_sample(p, random_count, seed);
  if (plan.full) return std::nullopt;
  return std::move(plan.sample);
}

}  // namespace flashproof
