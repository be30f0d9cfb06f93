// Partial launches (kernels/flash/wanted_outputs.h): with a sample, the emulated kernels run only
// the thread blocks (and, in the backward, the query blocks of a key block) that produce judged
// outputs. Every judged output must be bit for bit what the full launch gives, and the launch must
// really be partial (some unjudged output is left unwritten). Label `emulated`.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/generators.h"
#include "harness/check.h"
#include "kernels/registry.h"
#include "tests/harness/bucket_not_built.h"
#include "tests/sampled_problems.h"

namespace flashproof {
namespace {

struct PartialCase {
  const char* impl;
  Problem p;
  bool with_columns;  // the sample has key columns (dK, dV): the forward then runs in full
};

using testing_support::make_problem;

// A few rows and columns: the first and last of the problem and one inside.
OutputSample hand_sample(const Problem& p, bool with_columns) {
  OutputSample s;
  s.rows.assign(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 0);
  s.cols.assign(static_cast<std::size_t>(p.batch * p.heads_kv * p.seqlen_k), 0);
  s.rows.front() = s.rows.back() = 1;
  s.rows[s.rows.size() / 2] = 1;
  if (with_columns) {
    s.cols.front() = s.cols.back() = 1;
    s.cols[s.cols.size() / 3] = 1;
  }
  return s;
}

// Bits of a [b, s, h, d] tensor's row (b, h, i) in the [b][h][s] flat order of the sample.
std::vector<std::uint64_t> row_bits(const HostTensor& t, std::int64_t flat, std::int64_t heads, std::int64_t seq) {
  const std::int64_t i = flat % seq, h = (flat / seq) % heads, b = flat / (seq * heads);
  std::vector<std::uint64_t> bits;
  for (std::int64_t c = 0; c < t.shape()[3]; ++c) bits.push_back(t.bits(b, i, h, c));
  return bits;
}
// Still the harness's poison (core/attention_impl.h).
bool row_unwritten(const HostTensor& t, std::int64_t flat, std::int64_t heads, std::int64_t seq) {
  for (std::uint64_t bits : row_bits(t, flat, heads, seq))
    if (bits != output_poison_bits(t.dtype())) return false;
  return true;
}

void PrintTo(const PartialCase& c, std::ostream* os) {
  *os << c.impl << ' ' << c.p.describe() << (c.with_columns ? " with key columns" : " rows only");
}

class PartialLaunch : public ::testing::TestWithParam<PartialCase> {};

TEST_P(PartialLaunch, JudgedOutputsAreBitwiseTheFullLaunchs) {
  const PartialCase& pc = GetParam();
  const Problem& p = pc.p;
  AttentionImpl& impl = *find_implementation(pc.impl);
  FP_SKIP_IF_BUCKET_NOT_BUILT(pc.impl, p, true);
  ASSERT_EQ(impl.unsupported_reason(p, true), "");
  const Inputs in = generate_inputs(p, Distribution{}, 7);
  const OutputSample s = hand_sample(p, pc.with_columns);
  const Outputs full = run_implementation(impl, p, true, in);
  const Outputs part = run_implementation(impl, p, true, in, &s);
  // fa2's dQ meets through atomicAdd in whatever order the blocks run: not bitwise even in full.
  const bool dq_bitwise = impl.bitwise_reproducible_backward();
  std::int64_t unwritten_dq = 0;
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(s.rows.size()); ++r) {
    if (!s.row(r)) {
      unwritten_dq += row_unwritten(part.dq, r, p.heads_q, p.seqlen_q);
      continue;
    }
    EXPECT_EQ(row_bits(part.o, r, p.heads_q, p.seqlen_q), row_bits(full.o, r, p.heads_q, p.seqlen_q)) << "O row " << r;
    const std::int64_t i = r % p.seqlen_q, h = (r / p.seqlen_q) % p.heads_q, b = r / (p.seqlen_q * p.heads_q);
    EXPECT_EQ(part.lse.bits(b, h, i, 0), full.lse.bits(b, h, i, 0)) << "LSE row " << r;
    if (dq_bitwise) {
      EXPECT_EQ(row_bits(part.dq, r, p.heads_q, p.seqlen_q), row_bits(full.dq, r, p.heads_q, p.seqlen_q)) << "dQ row " << r;
    }
  }
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(s.cols.size()); ++c) {
    if (!s.col(c)) continue;
    EXPECT_EQ(row_bits(part.dk, c, p.heads_kv, p.seqlen_k), row_bits(full.dk, c, p.heads_kv, p.seqlen_k)) << "dK col " << c;
    EXPECT_EQ(row_bits(part.dv, c, p.heads_kv, p.seqlen_k), row_bits(full.dv, c, p.heads_kv, p.seqlen_k)) << "dV col " << c;
  }
  // The launch was partial: dQ of rows no wanted query block holds is left as poisoned.
  EXPECT_GT(unwritten_dq, 0);
  if (!pc.with_columns && std::string(pc.impl) != "fa1") {  // the forward ran partially too (FA1's runs in full)
    std::int64_t unwritten_o = 0;
    for (std::int64_t r = 0; r < static_cast<std::int64_t>(s.rows.size()); ++r)
      if (!s.row(r)) unwritten_o += row_unwritten(part.o, r, p.heads_q, p.seqlen_q);
    EXPECT_GT(unwritten_o, 0);
  }
}

std::vector<PartialCase> cases() {
  std::vector<PartialCase> v;
  for (const char* impl : {"fa2", "fa2-deterministic", "fa1"})
    for (bool cols : {true, false}) {
      v.push_back({impl, make_problem(DType::fp16, 2, 2, 1, 200, 330, 64), cols});
      // causal; 400 rows: the sample's rows 0, 200 and 399 leave a 128-row block (FA2's forward tile at
      // d 128) unwanted, so the forward's launch is partial too
      v.push_back({impl, make_problem(DType::bf16, 1, 1, 1, 400, 400, 128, -1, 0), cols});
      v.push_back({impl, make_problem(DType::fp16, 1, 2, 1, 300, 180, 64, 40, 7), cols});  // local, GQA
      // A packed batch (docs/fa2.md "Packed batches"): each sequence's slice of the sample, sequences
      // without rows or keys among them; causal, GQA.
      Problem packed = make_problem(DType::bf16, 1, 4, 2, 400, 380, 64, -1, 0);
      packed.cu_seqlens_q = {0, 100, 100, 300, 330, 400};
      packed.cu_seqlens_k = {0, 150, 170, 300, 300, 380};
      v.push_back({impl, packed, cols});
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Emulated, PartialLaunch, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<PartialCase>& info) {
                           std::string n = std::string(info.param.impl) + "_" + std::to_string(info.index) +
                                           (info.param.with_columns ? "_columns" : "_rows_only");
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace flashproof
