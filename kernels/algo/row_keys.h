// The keys each query row of a problem sees, dense or packed (packed_batch.h): the one host-side
// reading of the mask for the reference, the bounds, the envelopes, the logit scan and the naive
// baseline. Rows and keys are storage indices within one storage batch (0 <= i < seqlen_q,
// 0 <= j < seqlen_k); a packed problem has one storage batch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/problem.h"
#include "kernels/algo/packed_batch.h"
#include "kernels/algo/score_mod.h"

namespace flashproof::algo {

class RowKeys {
 public:
  // top_left aligns each sequence's window to its first key instead of its last: the deliberately
  // wrong variant the reference's twins use (reference::Mutation::causal_top_left).
  enum class Align { bottom_right, top_left };

  explicit RowKeys(const Problem& p, Align align = Align::bottom_right)
      : RowKeys(p, p.window_left, p.window_right, align) {}
  // Another window on the same sequences (the naive baseline's off-by-one flaw).
  RowKeys(const Problem& p, std::int64_t window_left, std::int64_t window_right, Align align = Align::bottom_right)
      : cu_q_(p.cu_seqlens_q), cu_k_(p.cu_seqlens_k), seqlen_q_(p.seqlen_q), seqlen_k_(p.seqlen_k),
        left_(window_left), right_(window_right), top_left_(align == Align::top_left) {}

  bool packed() const { return !cu_q_.empty(); }

  // The sequence holding storage row i (0 for a dense problem), and its span.
  std::int64_t sequence_of_row(std::int64_t i) const {
    if (!packed()) return 0;
    // The last b with cu_q[b] <= i: empty sequences before it share its offset.
    return std::upper_bound(cu_q_.begin(), cu_q_.end(), i) - cu_q_.begin() - 1;
  }
  SequenceSpan<std::int64_t> sequence(std::int64_t b) const {
    if (!packed()) return {0, seqlen_q_, 0, seqlen_k_};
    return packed_sequence(cu_q_, cu_k_, b);
  }
  std::int64_t sequences() const { return packed() ? static_cast<std::int64_t>(cu_q_.size()) - 1 : 1; }

  // Storage keys [begin, end) that storage row i sees.
  KeyRange<std::int64_t> of_row(std::int64_t i) const {
    const SequenceSpan<std::int64_t> s = sequence(sequence_of_row(i));
    WindowMask<std::int64_t> w = s.mask(left_, right_);
    if (top_left_) w.offset = 0;
    const KeyRange<std::int64_t> r = visible_keys(w, s.seqlen_k, i - s.q_begin);
    return {s.k_begin + r.begin, s.k_begin + r.end};
  }
  // One pair; a loop over a row's keys takes of_row(i) once and asks it (contains).
  bool visible(std::int64_t i, std::int64_t j) const { return of_row(i).contains(j); }
  // ALiBi's |i + offset - j| (algo/score_mod.h) of storage row i and storage key j of its
  // sequence, in the sequence's coordinates and with the same alignment as the mask.
  std::int64_t alibi_distance(std::int64_t i, std::int64_t j) const {
    const SequenceSpan<std::int64_t> s = sequence(sequence_of_row(i));
    const std::int64_t offset = top_left_ ? 0 : s.seqlen_k - s.seqlen_q;
    return algo::alibi_distance<std::int64_t>(i - s.q_begin, j - s.k_begin, offset);
  }
  // Storage keys of row i's sequence: those a kernel computes logits with (some masked).
  KeyRange<std::int64_t> sequence_keys(std::int64_t i) const {
    const SequenceSpan<std::int64_t> s = sequence(sequence_of_row(i));
    return {s.k_begin, s.k_begin + s.seqlen_k};
  }

 private:
  std::vector<std::int64_t> cu_q_, cu_k_;
  std::int64_t seqlen_q_, seqlen_k_, left_, right_;
  bool top_left_;
};

}  // namespace flashproof::algo
