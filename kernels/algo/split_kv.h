// Split-KV (Flash-Decoding): a row's key blocks cut into `num_splits` contiguous runs, each run
// computed on its own into a partial result (O_s, LSE_s), and the partials combined. The pieces
// here are what a split kernel, its combine kernel, the emulator and the proofs share
// (proofs/split_kv_proofs.cpp: every visible key block in exactly one split for every split count;
// an empty split is merge_states' identity):
//   split s of num_splits visits split_key_blocks(key_blocks, num_splits, s) met with the row
//   block's own range (key_blocks_for_query_block): split_share;
//   it writes O_s = acc * finalize_row(m, l).inv_sum and LSE_s = split_lse(m, l, ln2), which is -inf
//   (not finalize_row's +inf) for a split that saw no key of the row;
//   the combine folds split_state(LSE_s) with merge_states (online_softmax.h) in split order,
//   acc += coef * O_s, and finalises with finalize_row: O = 0 and LSE = +inf when every split was
//   empty, as for a row that sees no key.
// key_blocks must count the keys in use (a cache's used length plus the appended keys), never an
// allocated capacity: blocks past the used length would hold keys no row may see.
#pragma once

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/int_math.h"
#include "kernels/algo/online_softmax.h"

namespace flashproof::algo {

// Split `split` (0 <= split < num_splits) of the key blocks [0, key_blocks): runs of
// ceil(key_blocks / num_splits) blocks from the start, the last ones shorter or empty.
template <class Int>
FP_HOST_DEVICE BlockRange<Int> split_key_blocks(Int key_blocks, Int num_splits, Int split) {
  using D = Domain<Int>;
  const Int per_split = ceil_div(key_blocks, num_splits);
  const Int begin = D::min(key_blocks, split * per_split);
  return {begin, D::min(key_blocks, begin + per_split)};
}

// The blocks a split visits for a query block whose own range is `visible`: their intersection
// (empty, end <= begin, when they do not meet).
template <class Int>
FP_HOST_DEVICE BlockRange<Int> split_share(const BlockRange<Int>& visible, const BlockRange<Int>& split) {
  using D = Domain<Int>;
  return {D::max(visible.begin, split.begin), D::min(visible.end, split.end)};
}

// The natural-log LSE a split writes for a row whose state after its keys is (m, l): -inf where the
// split saw no key of the row (l = 0), so that the combine reads it as the empty state.
template <class T>
FP_HOST_DEVICE T split_lse(T m, T l, T ln2) {
  using D = Domain<T>;
  return D::select(D::is_zero(l), -D::pos_inf(l), D::mul(m, ln2) + D::log(l));
}

template <class T>
struct SplitState {
  T max;  // log2 units, as merge_states takes it
  T sum;  // 1 for a split with keys (O_s is normalised), 0 for an empty one
};

// The combine's state for a split's LSE (natural log): (-inf, 0) for an empty split, merge_states'
// identity, else (LSE_s log2 e, 1).
template <class T>
FP_HOST_DEVICE SplitState<T> split_state(T lse, T log2e) {
  using D = Domain<T>;
  const auto empty = D::is_neg_inf(lse);
  return {D::select(empty, lse, D::mul(lse, log2e)), D::select(empty, D::lit(0, lse), D::lit(1, lse))};
}

}  // namespace flashproof::algo
