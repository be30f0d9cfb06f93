// Theorem 10, the paged KV cache's arithmetic in int (kernels/algo/paged_kv.h): the decode
// kernels' paged_cache_row, CacheWalk::start_paged, advance and paged_at, instantiated with
// Checked, an exact integer that records for each +, -, * and / that its result fits a 32-bit int
// (and that no division is by 0). Proved for every page size the API accepts (16 to 256 in steps
// of 16, each its own query: a division by a constant is linear), at the limits
// kernels/flash/validate.cpp enforces (batch <= 65535, a table of at most 2^31 - 1 entries, a
// capacity of at most 2^29 keys, pages that fit int): no operation overflows, every table index
// lies inside the table, and the walk keeps page * page_size + slot equal to the key it stands on.
// The one product of two unknowns, b * pages_per_sequence, enters through a lemma proved on its
// own: b < batch implies b * pps + pps <= batch * pps (the rest is then linear).
// Twin: the table's size unchecked (as an API checking only batch and the capacity would accept).
#include <z3++.h>

#include <string>
#include <vector>

#include "kernels/algo/paged_kv.h"
#include "proofs/catalog.h"

namespace flashproof::proofs {

// A C++ int as an exact integer whose operations push "the result fits int" (and "the divisor is
// not 0") onto the obligations being collected.
struct Checked {
  z3::expr e;
};

namespace {

std::vector<z3::expr>* obligations = nullptr;

class Collect {
 public:
  explicit Collect(std::vector<z3::expr>& into) { obligations = &into; }
  ~Collect() { obligations = nullptr; }
  Collect(const Collect&) = delete;
  Collect& operator=(const Collect&) = delete;
};

Checked fits(const z3::expr& exact) {
  if (obligations) obligations->push_back(-(z3::expr(exact.ctx().int_val(std::int64_t{1} << 31))) <= exact &&
                                           exact < exact.ctx().int_val(std::int64_t{1} << 31));
  return Checked{exact};
}

}  // namespace

inline Checked operator+(const Checked& a, const Checked& b) { return fits(a.e + b.e); }
inline Checked operator-(const Checked& a, const Checked& b) { return fits(a.e - b.e); }
inline Checked operator*(const Checked& a, const Checked& b) { return fits(a.e * b.e); }
inline Checked operator+(const Checked& a, int b) { return fits(a.e + b); }
// C++ '/' truncates toward zero; Z3's integer division rounds so that the remainder is >= 0.
inline Checked operator/(const Checked& a, const Checked& b) {
  if (obligations) obligations->push_back(b.e != 0);
  const z3::expr floor_div = z3::ite(b.e > 0, a.e / b.e, -(a.e / -b.e));  // for a >= 0
  const z3::expr negated = z3::ite(b.e > 0, -(-a.e / b.e), (-a.e) / (-b.e));  // for a < 0
  return fits(z3::ite(a.e >= 0, floor_div, negated));
}
inline z3::expr operator>=(const Checked& a, const Checked& b) { return a.e >= b.e; }
inline z3::expr operator!=(const Checked& a, int b) { return a.e != b; }

}  // namespace flashproof::proofs

namespace flashproof::algo {

template <>
struct Domain<proofs::Checked> {
  using C = proofs::Checked;
  static C lit(double v, const C& like) { return C{like.e.ctx().int_val(static_cast<std::int64_t>(v))}; }
  static C select(const z3::expr& cond, const C& a, const C& b) { return C{z3::ite(cond, a.e, b.e)}; }
};

}  // namespace flashproof::algo

namespace flashproof::proofs {
namespace {

using C = Checked;

// The block table: an unknown entry per index, each read's index recorded (it must lie inside the
// table) and its value assumed in [0, num_pages), as the API checks every entry.
struct Table {
  z3::func_decl entry;
  std::vector<z3::expr>* reads;
  C operator[](const C& index) const {
    reads->push_back(index.e);
    return C{entry(index.e)};
  }
};

z3::expr conjunction(z3::context& c, const std::vector<z3::expr>& v) {
  z3::expr a = c.bool_val(true);
  for (const z3::expr& x : v) a = a && x;
  return a;
}

constexpr std::int64_t kMaxBatch = 65535, kMaxEntries = (std::int64_t{1} << 31) - 1,
                       kMaxCapacity = std::int64_t{1} << 29, kMaxStep = 16, kStartSlack = 256;

std::vector<Obligation> paged_obligations(z3::context& c, Variant v) {
  const auto var = [&](const char* name) { return C{c.int_const(name)}; };
  const C batch = var("batch"), pps = var("pages_per_sequence"), num_pages = var("num_pages"), b = var("b");
  const C j = var("j"), step = var("step"), slot = var("slot"), page = var("page");
  const z3::func_decl entry = c.function("block_table", c.int_sort(), c.int_sort());
  const z3::expr product = b.e * pps.e;  // the one nonlinear term
  std::vector<Obligation> out;
  // The lemma the rest uses: for 0 <= b < batch and pps >= 0, b * pps + pps <= batch * pps.
  const z3::expr monotone = product + pps.e <= batch.e * pps.e;
  out.push_back({"lemma: b * pps + pps <= batch * pps for 0 <= b < batch", {0 <= b.e, b.e < batch.e, pps.e >= 0},
                 monotone});
  for (std::int64_t ps = 16; ps <= 256; ps += 16) {
    const C page_size{c.int_val(ps)};
    const std::string at = " (page_size " + std::to_string(ps) + ")";
    // What the API guarantees (kernels/flash/validate.cpp) and the grid's batch index.
    std::vector<z3::expr> api = {1 <= batch.e, batch.e <= c.int_val(kMaxBatch), 1 <= pps.e,
                                 pps.e * c.int_val(ps) <= c.int_val(kMaxCapacity), 1 <= num_pages.e,
                                 num_pages.e <= c.int_val(kMaxEntries), 0 <= b.e, b.e < batch.e, monotone};
    if (v == Variant::shipped) api.push_back(batch.e * pps.e <= c.int_val(kMaxEntries));
    const z3::expr entries = batch.e * pps.e;
    // Runs `compute` collecting its overflow checks and table reads: the goal is every check, every
    // read inside [0, entries), and `also`; every read's value is assumed a page of the pool.
    const auto add = [&](const std::string& what, std::vector<z3::expr> assumptions, auto&& compute) {
      std::vector<z3::expr> checks, reads;
      z3::expr also = c.bool_val(true);
      {
        Collect collect(checks);
        also = compute(Table{entry, &reads});
      }
      for (const z3::expr& index : reads) {
        checks.push_back(0 <= index && index < entries);
        assumptions.push_back(0 <= entry(index) && entry(index) < num_pages.e);
      }
      out.push_back({what + at, std::move(assumptions), conjunction(c, checks) && also});
    };
    std::vector<z3::expr> key = api;  // a key below the capacity
    key.insert(key.end(), {0 <= j.e, j.e < pps.e * c.int_val(ps)});
    add("paged_cache_row", key, [&](const Table& t) {
      const algo::CacheRow<C> r = algo::paged_cache_row(b, j, page_size, pps, t);
      return 0 <= r.row.e && r.row.e < c.int_val(ps);
    });
    std::vector<z3::expr> start = api;  // a walk may start past the used keys, up to a tile beyond the capacity
    start.insert(start.end(), {0 <= j.e, j.e <= pps.e * c.int_val(ps) + c.int_val(kStartSlack)});
    add("CacheWalk::start_paged", start, [&](const Table& t) {
      const auto w = algo::CacheWalk<C, C, Table>::start_paged(b, j, page_size, pps, t);
      return w.page.e * c.int_val(ps) + w.key_or_slot.e == j.e && 0 <= w.key_or_slot.e && w.key_or_slot.e < c.int_val(ps);
    });
    // A walk's state: slot in [0, page_size), page * page_size + slot its key.
    const z3::expr key_of = page.e * c.int_val(ps) + slot.e;
    std::vector<z3::expr> state = api;
    state.insert(state.end(), {0 <= slot.e, slot.e < c.int_val(ps), 0 <= page.e});
    std::vector<z3::expr> stepping = state;
    stepping.insert(stepping.end(), {key_of <= pps.e * c.int_val(ps) + c.int_val(kStartSlack), 1 <= step.e,
                                     step.e <= c.int_val(kMaxStep)});
    add("CacheWalk::advance", stepping, [&](const Table& t) {
      algo::CacheWalk<C, C, Table> w{b, slot, page, page_size, pps, t};
      w.advance(step);
      return w.page.e * c.int_val(ps) + w.key_or_slot.e == key_of + step.e && 0 <= w.key_or_slot.e &&
             w.key_or_slot.e < c.int_val(ps);
    });
    std::vector<z3::expr> loaded = state;  // the copies read only rows below the used length
    loaded.push_back(key_of < pps.e * c.int_val(ps));
    add("CacheWalk::paged_at", loaded, [&](const Table& t) {
      const algo::CacheWalk<C, C, Table> w{b, slot, page, page_size, pps, t};
      return w.paged_at().row.e == slot.e;
    });
  }
  return out;
}

}  // namespace

std::vector<ProofSpec> paged_kv_proofs() {
  return {{"paged_int32",
           "the paged KV cache's arithmetic as the decode kernels evaluate it in int (paged_cache_row, "
           "CacheWalk::start_paged, advance, paged_at): for every page size 16..256 in steps of 16, batch <= 65535, "
           "a table of at most 2^31 - 1 entries, a capacity of at most 2^29 keys, walk steps up to 16 and starts up "
           "to 256 keys past the capacity, no operation overflows, every table index lies inside the table and the "
           "walk's page and slot name the key it stands on",
           "the table's size unchecked (only batch and the capacity limited)", paged_obligations}};
}

}  // namespace flashproof::proofs
