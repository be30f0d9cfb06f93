// Theorem 7, packed batches (docs/spec.md "Packed batches"), over the shipped pieces of
// kernels/algo/packed_batch.h instantiated with Z3 integers:
// - packed_visible_keys: visible_keys(w, seqlen_k, i), the interval the harness iterates
//   (algo::RowKeys), is exactly the keys j in [0, seqlen_k) that w.visible(i, j) accepts, for all
//   lengths >= 0 (a sequence may be empty), every row and every window (negative side unbounded).
// - packed_rows_in_sequence: the span packed_sequence gives sequence b addresses exactly that
//   sequence's storage rows and keys: row r < seqlen_q of the span is storage row q_begin + r in
//   [cu_q[b], cu_q[b+1]) and every such storage row is one r (the same for keys), for any
//   non-decreasing offsets. With theorem 5 per sequence, no tile reads or writes another
//   sequence's rows and every in-sequence element is visited. (packed_int32 in
//   machine_int_proofs.cpp shows the kernels' int arithmetic computes these.)
#include <z3++.h>

#include <string>
#include <vector>

#include "kernels/algo/packed_batch.h"
#include "proofs/catalog.h"
#include "proofs/z3_domain.h"

namespace flashproof::proofs {
namespace {

using Expr = z3::expr;
using D = algo::Domain<Expr>;

// The keys' end forgets the + 1: the last visible key (the diagonal, for causal) is dropped.
algo::KeyRange<Expr> visible_keys_end_off_by_one(const algo::WindowMask<Expr>& w, Expr seqlen_k, Expr i) {
  const Expr zero = D::lit(0, i);
  const Expr diag = i + w.offset;
  const Expr begin = D::select(w.window_left < 0, zero, D::max(zero, diag - D::min(w.window_left, diag)));
  const Expr right = D::min(w.window_right, seqlen_k - diag);
  const Expr end = D::select(w.window_right < 0, seqlen_k, D::min(seqlen_k, diag + right));
  return {begin, D::max(begin, end)};
}

std::vector<Obligation> visible_keys_obligations(z3::context& c, Variant v) {
  const Expr sq = c.int_const("seqlen_q"), sk = c.int_const("seqlen_k");
  const Expr i = c.int_const("i"), j = c.int_const("j");
  const algo::WindowMask<Expr> w{sk - sq, c.int_const("window_left"), c.int_const("window_right")};
  const algo::KeyRange<Expr> r =
      v == Variant::shipped ? algo::visible_keys(w, sk, i) : visible_keys_end_off_by_one(w, sk, i);
  const std::vector<Expr> row = {sq >= 0, sk >= 0, 0 <= i, i < sq};
  const Expr in_range = r.begin <= j && j < r.end;
  const Expr seen = 0 <= j && j < sk && w.visible(i, j);
  std::vector<Expr> sound = row, complete = row;
  sound.push_back(in_range);
  complete.push_back(seen);
  return {{"interval keys are visible", sound, seen},
          {"visible keys are in the interval", complete, in_range},
          {"the interval is ordered", row, r.begin <= r.end}};
}

// The offsets as the kernels index them: any array of integers.
struct Offsets {
  Expr array;
  Expr operator[](const Expr& b) const { return z3::select(array, b); }
};

// The twin: the span of sequence b starts where sequence b + 1 does (an off-by-one in the offset
// index, as with a padded-offsets buffer read with another stride).
template <class Int>
algo::SequenceSpan<Int> packed_sequence_shifted(const Offsets& cu_q, const Offsets& cu_k, Int b) {
  const Int q0 = cu_q[b + 1], k0 = cu_k[b + 1];
  return {q0, cu_q[b + 1] - cu_q[b], k0, cu_k[b + 1] - cu_k[b]};
}

std::vector<Obligation> rows_in_sequence_obligations(z3::context& c, Variant v) {
  const z3::sort ints = c.int_sort();
  const Offsets cu_q{c.constant("cu_q", c.array_sort(ints, ints))}, cu_k{c.constant("cu_k", c.array_sort(ints, ints))};
  const Expr b = c.int_const("b"), r = c.int_const("r"), x = c.int_const("x");
  const algo::SequenceSpan<Expr> s =
      v == Variant::shipped ? algo::packed_sequence(cu_q, cu_k, b) : packed_sequence_shifted(cu_q, cu_k, b);
  // Sequence b and its neighbour are non-decreasing offsets (as validated), from 0.
  const std::vector<Expr> offsets = {b >= 0, cu_q[b] >= 0, cu_q[b] <= cu_q[b + 1], cu_q[b + 1] <= cu_q[b + 2],
                                     cu_k[b] >= 0, cu_k[b] <= cu_k[b + 1], cu_k[b + 1] <= cu_k[b + 2]};
  const auto inside = [&](const Expr& lo, const Expr& len, const Offsets& cu, const char* what) {
    std::vector<Expr> row = offsets, storage = offsets;
    row.insert(row.end(), {0 <= r, r < len});
    storage.insert(storage.end(), {cu[b] <= x, x < cu[b + 1]});
    return std::vector<Obligation>{
        {std::string("the span's ") + what + "s lie in the sequence", row, cu[b] <= lo + r && lo + r < cu[b + 1]},
        {std::string("every ") + what + " of the sequence is in the span", storage, 0 <= x - lo && x - lo < len}};
  };
  std::vector<Obligation> all = inside(s.q_begin, s.seqlen_q, cu_q, "query row");
  for (Obligation& o : inside(s.k_begin, s.seqlen_k, cu_k, "key")) all.push_back(std::move(o));
  return all;
}

}  // namespace

std::vector<ProofSpec> packed_batch_proofs() {
  return {{"packed_visible_keys",
           "visible_keys(w, seqlen_k, i) is exactly the keys j in [0, seqlen_k) that w.visible(i, j) accepts, for "
           "all seqlen_q, seqlen_k >= 0 (empty sequences included), rows and windows (negative side unbounded); "
           "mathematical integers",
           "the interval's end forgets the + 1 (the diagonal key is dropped)",
           visible_keys_obligations},
          {"packed_rows_in_sequence",
           "packed_sequence(cu_q, cu_k, b) addresses exactly sequence b's storage rows and keys for any "
           "non-decreasing offsets: no tile of sequence b reads or writes another sequence's rows, and "
           "every row and key of the sequence is in its span; mathematical integers",
           "the span starts at the next sequence's offset",
           rows_in_sequence_obligations}};
}

}  // namespace flashproof::proofs
