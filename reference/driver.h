// Runs the Engine over a whole problem (or a masked part of it) on host threads. Work items are
// fixed independently of the thread count, so results are bitwise reproducible.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "reference/engine.h"

namespace flashproof::reference {

template <class Real>
void allocate(const Problem& p, bool backward, EngineOutput<Real>& out) {
  const Real nan = Real(std::numeric_limits<double>::quiet_NaN());
  const std::int64_t nq = p.batch * p.seqlen_q * p.heads_q * p.head_dim;
  const std::int64_t nk = p.batch * p.seqlen_k * p.heads_kv * p.head_dim;
  const double inf = std::numeric_limits<double>::infinity();
  if (!backward) {
    out.o.assign(nq, nan);
    out.o_err.assign(nq, inf);
    out.o_mass.assign(nq, 0);
    out.lse.assign(p.batch * p.heads_q * p.seqlen_q, nan);
    out.lse_err.assign(p.batch * p.heads_q * p.seqlen_q, inf);
    out.max_abs_logit.assign(p.batch * p.heads_q * p.seqlen_q, 0);
  } else {
    out.dq.assign(nq, nan);
    out.dq_err.assign(nq, inf);
    out.dq_mass.assign(nq, 0);
    out.dk.assign(nk, nan);
    out.dk_err.assign(nk, inf);
    out.dk_mass.assign(nk, 0);
    out.dv.assign(nk, nan);
    out.dv_err.assign(nk, inf);
    out.dv_mass.assign(nk, 0);
  }
}

// Forward of the rows (b, h, i) whose row_mask entry is set, into `out` (already allocated).
template <class Real>
void run_forward(const DenseInputs& in, ArithModel model, const std::vector<std::uint8_t>& row_mask,
                 EngineOutput<Real>& out, int threads, Mutation mutation) {
  const Problem& p = in.p;
  const Engine<Real> engine(in, model, mutation);
  // Blocks of rows per work item, so that one Row's buffers serve the whole block.
  constexpr std::int64_t kBlock = 16;
  const std::int64_t rows = p.batch * p.heads_q * p.seqlen_q;
  parallel_for(
      (rows + kBlock - 1) / kBlock,
      [&](std::int64_t item) {
        typename Engine<Real>::Row row;
        for (std::int64_t r = item * kBlock; r < std::min(rows, (item + 1) * kBlock); ++r) {
          if (!row_mask[r]) continue;
          const std::int64_t i = r % p.seqlen_q, h = (r / p.seqlen_q) % p.heads_q,
                             b = r / (p.seqlen_q * p.heads_q);
          engine.forward_row(b, h, i, row);
          for (std::int64_t c = 0; c < p.head_dim; ++c) {
            const std::int64_t idx = ((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + c;
            out.o[idx] = row.o[c];
            out.o_err[idx] = row.o_err[c];
            out.o_mass[idx] = row.o_mass[c];
          }
          out.lse[r] = row.lse;
          out.lse_err[r] = row.lse_err;
          out.max_abs_logit[r] = row.max_abs_logit;
        }
      },
      threads);
}

// Backward: dQ for rows in dq_mask ([b][hq][sq]), dK/dV for columns in col_mask ([b][hkv][sk]).
template <class Real>
void run_backward(const DenseInputs& in, ArithModel model, const std::vector<std::uint8_t>& dq_mask,
                  const std::vector<std::uint8_t>& col_mask, EngineOutput<Real>& out, int threads,
                  Mutation mutation) {
  const Problem& p = in.p;
  const Engine<Real> engine(in, model, mutation);
  const std::int64_t group_rows = p.group_size() * p.seqlen_q;
  // Rows of a group are cut into a fixed number of chunks (whatever the thread count, so results
  // are reproducible), each with its own dK/dV partial sums: one per 256 rows, at most 8.
  const std::int64_t chunks = std::clamp<std::int64_t>(group_rows / 256, 1, 8);
  const std::int64_t heads = p.batch * p.heads_kv;
  std::vector<typename Engine<Real>::ColumnAcc> acc(heads * chunks);
  std::vector<std::uint8_t> head_has_cols(heads, 0);
  for (std::int64_t x = 0; x < heads; ++x)
    head_has_cols[x] = std::any_of(col_mask.begin() + x * p.seqlen_k,
                                   col_mask.begin() + (x + 1) * p.seqlen_k, [](auto m) { return m; });
  parallel_for(
      heads * chunks,
      [&](std::int64_t w) {
        const std::int64_t x = w / chunks, chunk = w % chunks;
        if (head_has_cols[x]) acc[w].init(p.seqlen_k * p.head_dim, engine.compensated_columns());
        const std::int64_t begin = group_rows * chunk / chunks,
                           end = group_rows * (chunk + 1) / chunks;
        engine.backward_rows(x / p.heads_kv, x % p.heads_kv, begin, end, dq_mask, col_mask, acc[w],
                             out);
      },
      threads);
  parallel_for(
      heads,
      [&](std::int64_t x) {
        if (!head_has_cols[x]) return;
        std::vector<typename Engine<Real>::ColumnAcc> parts(
            std::make_move_iterator(acc.begin() + x * chunks),
            std::make_move_iterator(acc.begin() + (x + 1) * chunks));
        engine.finish_columns(x / p.heads_kv, x % p.heads_kv, parts, col_mask, out);
      },
      threads);
}

}  // namespace flashproof::reference
