// Theorem 9, split-KV (kernels/algo/split_kv.h), over the shipped pieces instantiated with Z3:
// - split_kv_cover (integers): for every split count from 1 to kMaxSplits and any number of key
//   blocks >= 0, split_key_blocks gives ordered ranges inside [0, key_blocks) that start at 0, end at
//   key_blocks and each begin where the previous one ends, so every key block lies in exactly one
//   split (an empty split is a range with end = begin); and a split's share of a query block's
//   visible range (split_share) holds exactly the visible blocks of that split.
// - split_kv_empty_state (fp32): a split that saw no key of a row writes LSE = -inf (split_lse),
//   and the combine reads it as the empty state (-inf, +0) (split_state), which fp_masked_row proves
//   merge_states' identity bitwise; a split with keys gives a finite state of sum 1.
#include <z3++.h>

#include <numbers>
#include <string>
#include <vector>

#include "kernels/algo/split_kv.h"
#include "proofs/catalog.h"
#include "proofs/fp32_function_axioms.h"
#include "proofs/fp32_terms.h"
#include "proofs/z3_domain.h"

namespace flashproof::proofs {
namespace {

using Expr = z3::expr;
using D = algo::Domain<Expr>;

// The split counts a split heuristic may choose (FlashAttention-2's caps at 128).
constexpr int kMaxSplits = 128;

// The twin: each split forgets its last block (a loop bound off by one).
algo::BlockRange<Expr> split_skipping_last_block(const Expr& key_blocks, const Expr& num_splits, const Expr& split) {
  const Expr per_split = algo::ceil_div(key_blocks, num_splits);
  const Expr begin = D::min(key_blocks, split * per_split);
  return {begin, D::max(begin, D::min(key_blocks, begin + per_split - 1))};
}

std::vector<Obligation> cover_obligations(z3::context& c, Variant v) {
  const Expr n = c.int_const("key_blocks"), s = c.int_const("split"), x = c.int_const("block");
  const Expr vb = c.int_const("visible_begin"), ve = c.int_const("visible_end");
  std::vector<Obligation> out;
  for (int count = 1; count <= kMaxSplits; ++count) {
    const Expr splits = c.int_val(count);
    const auto range = [&](const Expr& k) {
      return v == Variant::shipped ? algo::split_key_blocks(n, splits, k) : split_skipping_last_block(n, splits, k);
    };
    const algo::BlockRange<Expr> r = range(s), next = range(s + 1), first = range(c.int_val(0)),
                                 last = range(c.int_val(count - 1));
    const std::string at = " (" + std::to_string(count) + (count == 1 ? " split)" : " splits)");
    const std::vector<Expr> any_split = {n >= 0, 0 <= s, s < splits};
    out.push_back({"ordered and inside the key blocks" + at, any_split, 0 <= r.begin && r.begin <= r.end && r.end <= n});
    out.push_back({"the first starts at 0 and the last ends at key_blocks" + at, {n >= 0},
                   first.begin == 0 && last.end == n});
    // Distributivity, a theorem of the integers, stated so that Z3 can take split * per_split as
    // one atom: the query is then linear (without it, minutes at some split counts).
    const Expr per = algo::ceil_div(n, splits);
    if (count > 1)
      out.push_back({"each begins where the previous ends" + at,
                     {n >= 0, 0 <= s, s + 1 < splits, (s + 1) * per == s * per + per}, r.end == next.begin});
  }
  // A share is exactly the visible blocks of its split (any split count: the ranges are symbolic).
  const algo::BlockRange<Expr> split{c.int_const("split_begin"), c.int_const("split_end")};
  const algo::BlockRange<Expr> share = algo::split_share(algo::BlockRange<Expr>{vb, ve}, split);
  out.push_back({"a share holds exactly the visible blocks of its split", {},
                 (share.begin <= x && x < share.end) == (vb <= x && x < ve && split.begin <= x && x < split.end)});
  return out;
}

// split_lse as a split kernel would write it if it reused finalize_row (+inf for an empty split).
Expr split_lse_from_finalize(const Expr& m, const Expr& l, const Expr& ln2) {
  return algo::finalize_row(m, l, ln2).lse;
}

std::vector<Obligation> empty_state_obligations(z3::context& c, Variant v) {
  using namespace fp32;
  const Expr ln2 = D::lit(std::numbers::ln2, f32(c, 0.0f)), log2e = D::lit(std::numbers::log2e, f32(c, 0.0f));
  const auto lse_of = [&](const Expr& m, const Expr& l) {
    return v == Variant::shipped ? algo::split_lse(m, l, ln2) : split_lse_from_finalize(m, l, ln2);
  };
  const Expr m = f32_var(c, "m"), l = f32_var(c, "l");
  std::vector<Obligation> out;
  // A split without a key of the row ends in (-inf, +0) (fp_masked_row); any m is allowed here.
  const Expr empty_lse = lse_of(m, f32(c, 0.0f));
  const algo::SplitState<Expr> empty = algo::split_state(empty_lse, log2e);
  out.push_back(obligation("empty split: LSE = -inf", {}, is_neg_inf(empty_lse)));
  out.push_back(obligation("empty split: the combine's state is (-inf, +0)", {},
                           is_neg_inf(empty.max) && plus_zero(empty.sum)));
  // A split with keys: |m| <= 2^100, l in [1, 2^100] (fp_finalize_row's domain).
  const Expr lse = lse_of(m, l);
  const algo::SplitState<Expr> full = algo::split_state(lse, log2e);
  const std::vector<Expr> with_keys = {within(m, 0x1p100f), within(l, 0x1p100f), f32(c, 1.0f) <= l};
  out.push_back(obligation("split with keys: a finite state of sum 1", with_keys,
                           is_finite(lse) && is_finite(full.max) && is_one(full.sum)));
  return out;
}

}  // namespace

std::vector<ProofSpec> split_kv_proofs() {
  return {{"split_kv_cover",
           "split_key_blocks(key_blocks, num_splits, s) for every num_splits from 1 to " + std::to_string(kMaxSplits) +
               " and key_blocks >= 0: ordered ranges inside [0, key_blocks), the first from 0, the last to "
               "key_blocks, each from where the previous ends (every key block in exactly one split); "
               "split_share holds exactly the visible blocks of its split; mathematical integers",
           "each split forgets its last block", cover_obligations},
          {"split_kv_empty_state",
           std::string("fp32: split_lse of a split that saw no key of the row is -inf and split_state reads it as "
                       "(-inf, +0), merge_states' identity (fp_masked_row); for |m| <= 2^100, l in [1, 2^100] the "
                       "LSE and the state are finite, of sum 1.") +
               fp32::kAssumedProperties,
           "the split's LSE from finalize_row: +inf for an empty split, which the combine takes for a key",
           empty_state_obligations}};
}

}  // namespace flashproof::proofs
