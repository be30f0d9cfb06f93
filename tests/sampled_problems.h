// What the sampled-check tests share (tests/kernels/naive, tests/bounds, tests/kernels/flash,
// tests/harness): a problem from its sizes, the small problems whose masks leave rows and keys
// unseen, and a hand-made sample spread over a problem.
#pragma once

#include <cstdint>
#include <vector>

#include "core/output_sample.h"
#include "core/problem.h"

namespace flashproof::testing_support {

inline Problem make_problem(DType t, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t sq,
                            std::int64_t sk, std::int64_t d, std::int64_t left = -1, std::int64_t right = -1) {
  Problem p;
  p.dtype = t;
  p.batch = batch, p.heads_q = hq, p.heads_kv = hkv;
  p.seqlen_q = sq, p.seqlen_k = sk, p.head_dim = d;
  p.window_left = left, p.window_right = right;
  return p;
}

inline std::vector<Problem> small_masked_problems() {
  return {
      // GQA 2, causal with seqlen_q > seqlen_k: rows 0..3 see no key; head_dim not a multiple of 4.
      make_problem(DType::fp16, 2, 4, 2, 11, 7, 10, -1, 0),
      // A local window (bf16): row i sees keys i+1..i+5, so key 0 is seen by no row.
      make_problem(DType::bf16, 2, 2, 1, 9, 13, 12, 3, 1),
      // No mask, more than one 16-key block (missing-rescale), seqlen_q < seqlen_k.
      make_problem(DType::fp16, 1, 2, 1, 20, 37, 16),
      // Causal bf16 with seqlen_q < seqlen_k, GQA 2.
      make_problem(DType::bf16, 1, 4, 2, 6, 19, 8, -1, 0),
  };
}

// The first and last row / column and a spread between them (rows and columns each optional).
inline OutputSample spread_sample(const Problem& p, bool with_rows, bool with_cols) {
  OutputSample s;
  const std::int64_t nrows = p.batch * p.heads_q * p.seqlen_q, ncols = p.batch * p.heads_kv * p.seqlen_k;
  s.rows.assign(static_cast<std::size_t>(nrows), 0);
  s.cols.assign(static_cast<std::size_t>(ncols), 0);
  if (with_rows)
    for (std::int64_t r = 0; r < nrows; ++r) s.rows[r] = r == 0 || r == nrows - 1 || r % 7 == 3;
  if (with_cols)
    for (std::int64_t c = 0; c < ncols; ++c) s.cols[c] = c == 0 || c == ncols - 1 || c % 5 == 2;
  return s;
}

}  // namespace flashproof::testing_support
