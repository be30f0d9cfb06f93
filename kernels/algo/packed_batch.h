// Packed batches (docs/spec.md "Packed batches"): B sequences of different lengths stored back to
// back in one storage batch, as FlashAttention-2's varlen API takes them. Sequence b's query rows
// are storage rows [cu_q[b], cu_q[b+1]) and its keys [cu_k[b], cu_k[b+1]); inside a sequence the
// window mask is the dense one of that sequence's own lengths (aligned bottom-right per sequence),
// and no row sees a key of another sequence. A dense batch is the special case of one sequence per
// storage batch. Templated on the integer domain so that the kernels, the harness (row_keys.h) and
// the Z3 proofs share this one definition.
#pragma once

#include "kernels/algo/domain.h"
#include "kernels/algo/mask.h"

namespace flashproof::algo {

// Where one sequence lies in its storage batch, and its lengths.
template <class Int>
struct SequenceSpan {
  Int q_begin;   // storage row of its first query
  Int seqlen_q;  // its query rows
  Int k_begin;   // storage row of its first key
  Int seqlen_k;  // its keys

  // The sequence's own mask: bottom-right aligned to its lengths.
  FP_HOST_DEVICE WindowMask<Int> mask(Int window_left, Int window_right) const {
    return {seqlen_k - seqlen_q, window_left, window_right};
  }
};

// Sequence b of a packed batch from the cumulative offsets (B + 1 of each, from 0, non-decreasing;
// Problem::validate and the kernels' API check that).
template <class Int, class Offsets>
FP_HOST_DEVICE SequenceSpan<Int> packed_sequence(const Offsets& cu_q, const Offsets& cu_k, Int b) {
  const Int next = b + Domain<Int>::lit(1, b);
  const Int q0 = static_cast<Int>(cu_q[b]), k0 = static_cast<Int>(cu_k[b]);
  return {q0, static_cast<Int>(cu_q[next]) - q0, k0, static_cast<Int>(cu_k[next]) - k0};
}

template <class Int>
struct KeyRange {
  Int begin;
  Int end;  // end >= begin; begin == end: no key
  FP_HOST_DEVICE auto contains(Int j) const { return begin <= j && j < end; }
};

// The keys [begin, end) among [0, seqlen_k) that row i sees under w: a window is an interval.
// Written without diag - left or diag + right, which overflow for a side near the type's maximum
// (mask.h); |diag| stays below seqlen_q + seqlen_k. proofs/ show it is exactly the keys that
// w.visible accepts.
template <class Int>
FP_HOST_DEVICE KeyRange<Int> visible_keys(const WindowMask<Int>& w, Int seqlen_k, Int i) {
  using D = Domain<Int>;
  const Int zero = D::lit(0, i), one = D::lit(1, i);
  const Int diag = i + w.offset;
  // left >= 0: diag - min(left, diag) is diag - left where that is positive, else 0.
  const Int begin = D::select(w.window_left < 0, zero, D::max(zero, diag - D::min(w.window_left, diag)));
  // right >= 0: min(right, seqlen_k - diag) reaches seqlen_k - diag only where the window passes
  // the last key.
  const Int right = D::min(w.window_right, seqlen_k - diag);
  const Int end = D::select(w.window_right < 0, seqlen_k, D::min(seqlen_k, diag + right + one));
  return {begin, D::max(begin, end)};
}

}  // namespace flashproof::algo
