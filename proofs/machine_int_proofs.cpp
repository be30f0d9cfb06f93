// Theorem 5b, block skipping in machine integers: the kernels evaluate the mask predicate and the
// block ranges of kernels/algo/ in `int`, where an overflowing operation is undefined. Here those
// very templates are instantiated with Int32, a 32-bit bit-vector that records, for each +, -, *,
// / and negation, that its exact result fits in 32 bits (and that no division is by 0). Proved:
// under the bounds the flash APIs enforce (kernels/flash/validate.cpp: both lengths in [1, 2^29],
// window sides -1 or clamped to [0, seqlen_k] and [0, seqlen_q]) and for the block indices and
// (row, key) pairs the kernels pass, no operation overflows. Each operation then computes the
// mathematical integer, so theorem 5 (over unbounded integers) holds for the kernels' arithmetic.
// Twin: the windows as the API receives them, unclamped (any int): an overflow exists.
#include <z3++.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/packed_batch.h"
#include "kernels/algo/tile_configs.h"
#include "proofs/catalog.h"

namespace flashproof::proofs {

// A C++ int as Z3 sees it: a 32-bit bit-vector whose operations push "no overflow" onto the
// obligations being collected (one collector per obligation, set by Collecting).
struct Int32 {
  z3::expr e;
};

namespace {

std::vector<z3::expr>* collector = nullptr;

class Collecting {
 public:
  explicit Collecting(std::vector<z3::expr>& into) { collector = &into; }
  ~Collecting() { collector = nullptr; }
  Collecting(const Collecting&) = delete;
  Collecting& operator=(const Collecting&) = delete;
};

z3::expr wide(const z3::expr& x) { return z3::sext(x, 32); }

// The exact result, in 64 bits, lies in int's range.
Int32 checked(const z3::expr& exact64) {
  z3::context& c = exact64.ctx();
  if (collector)
    collector->push_back(z3::sge(exact64, c.bv_val(-(std::int64_t{1} << 31), 64)) &&
                         z3::slt(exact64, c.bv_val(std::int64_t{1} << 31, 64)));
  return Int32{exact64.extract(31, 0)};
}

}  // namespace

inline Int32 int32_val(z3::context& c, std::int64_t v) { return Int32{c.bv_val(v, 32)}; }
inline Int32 operator+(const Int32& a, const Int32& b) { return checked(wide(a.e) + wide(b.e)); }
inline Int32 operator-(const Int32& a, const Int32& b) { return checked(wide(a.e) - wide(b.e)); }
inline Int32 operator*(const Int32& a, const Int32& b) { return checked(wide(a.e) * wide(b.e)); }
inline Int32 operator-(const Int32& a) { return checked(-wide(a.e)); }
// C++ '/' truncates toward zero, as bvsdiv does; a zero divisor is undefined.
inline Int32 operator/(const Int32& a, const Int32& b) {
  if (collector) collector->push_back(b.e != 0);
  return checked(wide(a.e) / wide(b.e));
}
inline z3::expr operator<(const Int32& a, const Int32& b) { return z3::slt(a.e, b.e); }
inline z3::expr operator<=(const Int32& a, const Int32& b) { return z3::sle(a.e, b.e); }
inline z3::expr operator>(const Int32& a, const Int32& b) { return z3::sgt(a.e, b.e); }
inline z3::expr operator>=(const Int32& a, const Int32& b) { return z3::sge(a.e, b.e); }
inline z3::expr operator<(const Int32& a, int b) { return a < int32_val(a.e.ctx(), b); }
inline z3::expr operator>=(const Int32& a, int b) { return a >= int32_val(a.e.ctx(), b); }

}  // namespace flashproof::proofs

namespace flashproof::algo {

template <>
struct Domain<proofs::Int32> {
  using I = proofs::Int32;
  static I lit(double v, const I& like) { return proofs::int32_val(like.e.ctx(), static_cast<std::int64_t>(v)); }
  static I select(const z3::expr& cond, const I& a, const I& b) { return I{z3::ite(cond, a.e, b.e)}; }
  static I min(const I& a, const I& b) { return I{z3::ite(z3::sle(a.e, b.e), a.e, b.e)}; }
  static I max(const I& a, const I& b) { return I{z3::ite(z3::sge(a.e, b.e), a.e, b.e)}; }
};

}  // namespace flashproof::algo

namespace flashproof::proofs {
namespace {

using I = Int32;
using Geometry = algo::TileGeometry<I>;

struct Symbols {
  I seqlen_q, seqlen_k, window_left, window_right;
  std::vector<z3::expr> bounds;  // what the flash APIs guarantee
};

// Clamped: the windows make_flash_shape passes to the kernels. Unclamped (the twin): any int.
Symbols api_bounds(z3::context& c, bool clamped) {
  const auto v = [&](const char* name) { return I{c.bv_const(name, 32)}; };
  Symbols s{v("seqlen_q"), v("seqlen_k"), v("window_left"), v("window_right"), {}};
  const I one = int32_val(c, 1), most = int32_val(c, std::int64_t{1} << 29), minus_one = int32_val(c, -1);
  s.bounds = {one <= s.seqlen_q, s.seqlen_q <= most, one <= s.seqlen_k, s.seqlen_k <= most,
              minus_one <= s.window_left, minus_one <= s.window_right};
  if (clamped) {
    s.bounds.push_back(s.window_left <= s.seqlen_k);
    s.bounds.push_back(s.window_right <= s.seqlen_q);
  }
  return s;
}

z3::expr all_of(z3::context& c, const std::vector<z3::expr>& v) {
  z3::expr a = c.bool_val(true);
  for (const z3::expr& x : v) a = a && x;
  return a;
}

// The obligations of one tile shape: every operation of the kernels' calls fits in int.
std::vector<Obligation> no_overflow(z3::context& c, int block_m, int block_n, bool clamped) {
  const std::string label = "bm=" + std::to_string(block_m) + " bn=" + std::to_string(block_n);
  std::vector<Obligation> out;
  const auto add = [&](const std::string& what, std::vector<z3::expr> assumptions, auto&& compute) {
    std::vector<z3::expr> checks;
    {
      Collecting collecting(checks);
      compute();
    }
    out.push_back({what + " " + label, std::move(assumptions), all_of(c, checks)});
  };
  const Symbols s = api_bounds(c, clamped);
  const I bm = int32_val(c, block_m), bn = int32_val(c, block_n), zero = int32_val(c, 0);
  const I m_block{c.bv_const("m_block", 32)}, n_block{c.bv_const("n_block", 32)};
  const I row{c.bv_const("row", 32)}, key{c.bv_const("key", 32)};
  // Geometry as the kernels build it: offset = seqlen_k - seqlen_q is the kernels' first operation.
  std::vector<z3::expr> offset_checks;
  I offset = zero;
  {
    Collecting collecting(offset_checks);
    offset = s.seqlen_k - s.seqlen_q;
  }
  const Geometry g{bm, bn, s.seqlen_q, s.seqlen_k, algo::WindowMask<I>{offset, s.window_left, s.window_right}};
  std::vector<z3::expr> blocks = s.bounds;
  // The grid's and the loops' block indices: [0, ceil(seqlen / block)).
  // (Stated on the exact products, which cannot wrap in 64 bits; that the 32-bit ones do not
  // overflow is an obligation below.)
  const auto first_inside = [](const I& block, const I& size, const I& seqlen) {
    return z3::slt(wide(block.e) * wide(size.e), wide(seqlen.e));
  };
  blocks.push_back(zero <= m_block);
  blocks.push_back(first_inside(m_block, bm, s.seqlen_q));
  blocks.push_back(zero <= n_block);
  blocks.push_back(first_inside(n_block, bn, s.seqlen_k));
  out.push_back({"offset " + label, s.bounds, all_of(c, offset_checks)});
  add("block indices and ceil_div", s.bounds, [&] {
    (void)algo::ceil_div(s.seqlen_q, bm);
    (void)algo::ceil_div(s.seqlen_k, bn);
  });
  add("key_blocks_for_query_block", blocks, [&] { (void)algo::key_blocks_for_query_block(g, m_block); });
  add("query_blocks_for_key_block", blocks, [&] { (void)algo::query_blocks_for_key_block(g, n_block); });
  add("keys_seen_by_any_row", s.bounds, [&] { (void)algo::keys_seen_by_any_row(g); });
  add("tile_needs_no_mask", blocks, [&] { (void)algo::tile_needs_no_mask(g, m_block, n_block); });
  add("mask_free_key_blocks", blocks, [&] { (void)algo::mask_free_key_blocks(g, m_block); });
  // The kernels evaluate the mask (algo::pair_kept) for the pairs of the tiles they visit: rows
  // below seqlen_q + block_m and keys below seqlen_k + block_n (with MaskTest::all_tests, as the
  // FA1 forward and FA2's per-tile body evaluate it, visible runs past the sequence ends too).
  std::vector<z3::expr> pair = s.bounds;
  pair.insert(pair.end(), {zero <= row, z3::slt(wide(row.e), wide(s.seqlen_q.e) + wide(bm.e)), zero <= key,
                           z3::slt(wide(key.e), wide(s.seqlen_k.e) + wide(bn.e))});
  add("pair_kept", pair, [&] {
    (void)algo::pair_kept<algo::MaskTest::all_tests>(g.mask, s.seqlen_q, s.seqlen_k, row, key);
  });
  // The index products above were assumptions; the products themselves fit too.
  add("block index products", blocks, [&] {
    (void)(m_block * bm + bm);
    (void)(n_block * bn + bn);
  });
  return out;
}

std::vector<Obligation> every_shape(z3::context& c, bool clamped) {
  std::vector<Obligation> all;
  std::set<std::pair<int, int>> seen;
  for (const auto& t : algo::kTileConfigs)
    if (seen.insert({t.block_m, t.block_n}).second)
      for (Obligation& ob : no_overflow(c, t.block_m, t.block_n, clamped)) all.push_back(std::move(ob));
  return all;
}

// Packed batches' offsets as the kernels index them (int32 entries).
struct Int32Offsets {
  z3::expr array;  // bit-vector 32 -> bit-vector 32
  I operator[](const I& b) const { return I{z3::select(array, b.e)}; }
};

// A packed batch's per-block arithmetic: packed_sequence's lengths, the sequence's mask offset,
// and the storage rows and keys a tile of the sequence addresses (rows below seqlen_q + block_m,
// keys below seqlen_k + block_n, for the largest tile), for sequence indices below 65535 (the
// grid) and offsets non-decreasing in [0, total]. total: 2^29, the API's limit (limited), or
// 2^31 - 1, what an API checking only that the offsets are ints would accept (the twin).
std::vector<Obligation> packed_no_overflow(z3::context& c, bool limited) {
  const z3::sort bv = c.bv_sort(32);
  const Int32Offsets cu_q{c.constant("cu_q", c.array_sort(bv, bv))}, cu_k{c.constant("cu_k", c.array_sort(bv, bv))};
  const I b{c.bv_const("b", 32)}, row{c.bv_const("row", 32)}, key{c.bv_const("key", 32)};
  const I zero = int32_val(c, 0), total = int32_val(c, limited ? std::int64_t{1} << 29 : (std::int64_t{1} << 31) - 1);
  int bm = 0, bn = 0;
  for (const auto& t : algo::kTileConfigs) bm = std::max(bm, t.block_m), bn = std::max(bn, t.block_n);
  std::vector<z3::expr> assumptions = {zero <= b, b < int32_val(c, 65535)};
  const I b1{b.e + c.bv_val(1, 32)};  // b + 1, which b < 65535 keeps exact
  for (const Int32Offsets* cu : {&cu_q, &cu_k})
    assumptions.insert(assumptions.end(), {zero <= (*cu)[b], (*cu)[b] <= (*cu)[b1], (*cu)[b1] <= total});
  std::vector<z3::expr> checks;
  {
    Collecting collecting(checks);
    const algo::SequenceSpan<I> s = algo::packed_sequence(cu_q, cu_k, b);
    (void)s.mask(int32_val(c, -1), int32_val(c, 0));
    std::vector<z3::expr> tile = assumptions;
    tile.insert(tile.end(), {zero <= row, z3::slt(wide(row.e), wide(s.seqlen_q.e) + bm), zero <= key,
                             z3::slt(wide(key.e), wide(s.seqlen_k.e) + bn)});
    assumptions = tile;
    (void)(s.q_begin + row);
    (void)(s.k_begin + key);
  }
  return {{"packed offsets bm=" + std::to_string(bm) + " bn=" + std::to_string(bn), assumptions, all_of(c, checks)}};
}

}  // namespace

std::vector<ProofSpec> machine_int_proofs() {
  return {{"block_skip_int32",
           "the mask (pair_kept), ceil_div, the block ranges, tile_needs_no_mask and mask_free_key_blocks, evaluated in 32-bit int "
           "as the kernels do, never overflow for seqlens in [1, 2^29], windows -1 or clamped to [0, seqlen] "
           "(kernels/flash/validate.cpp) and the block indices and tile pairs the kernels pass, for every "
           "(block_m, block_n) of kTileConfigs; so theorem 5 holds for the kernels' machine integers",
           "the window sides unclamped, as the API receives them (any int)",
           [](z3::context& c, Variant v) { return every_shape(c, v == Variant::shipped); }},
          {"packed_int32",
           "a packed batch's per-block arithmetic in 32-bit int (packed_sequence's lengths, the sequence's mask "
           "offset, the storage row and key of every pair a tile of the sequence addresses) never overflows for "
           "offsets non-decreasing in [0, 2^29] (the flash APIs' limit on the totals) and fewer than 65535 sequences",
           "totals up to 2^31 - 1, as an API checking only that the offsets are ints would accept",
           [](z3::context& c, Variant v) { return packed_no_overflow(c, v == Variant::shipped); }}};
}

}  // namespace flashproof::proofs
