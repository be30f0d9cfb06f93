// The naive baseline and every flawed variant under a sample (ForwardArgs::wanted,
// BackwardArgs::wanted): each wanted output bit for bit that of the full run (so a flaw keeps its
// defect exactly), every other output left as the caller poisoned it.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/generators.h"
#include "kernels/naive/naive_attention.h"

namespace flashproof {
namespace {

// The harness's poison (harness/check.cpp): a NaN pattern no computation produces.
constexpr std::uint32_t kPoison16 = 0x7E5A, kPoison32 = 0x7FC5A5A5;
HostTensor poisoned(DType t, Shape shape, int rank = 4) {
  HostTensor x(t, shape, rank);
  x.fill_storage_bits(t == DType::fp32 ? kPoison32 : kPoison16);
  return x;
}

Problem make_problem(DType t, std::int64_t batch, std::int64_t hq, std::int64_t hkv, std::int64_t sq,
                     std::int64_t sk, std::int64_t d, std::int64_t left, std::int64_t right) {
  Problem p;
  p.dtype = t;
  p.batch = batch;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.head_dim = d;
  p.window_left = left;
  p.window_right = right;
  return p;
}

std::vector<Problem> problems() {
  return {
      // GQA 2, causal with seqlen_q > seqlen_k: rows 0..3 see no key; head_dim not a multiple of 4.
      make_problem(DType::fp16, 2, 4, 2, 11, 7, 10, -1, 0),
      // A local window (bf16): row i sees keys i+1..i+5, so key 0 is seen by no row.
      make_problem(DType::bf16, 2, 2, 1, 9, 13, 12, 3, 1),
      // No mask, more than one 16-key block (missing-rescale), seqlen_q < seqlen_k.
      make_problem(DType::fp16, 1, 2, 1, 20, 37, 16, -1, -1),
      // Causal bf16 with seqlen_q < seqlen_k, GQA 2.
      make_problem(DType::bf16, 1, 4, 2, 6, 19, 8, -1, 0),
  };
}

// Hand-made samples: the first and last row / column and a spread between them.
OutputSample sample_of(const Problem& p, bool with_rows, bool with_cols) {
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

struct Outputs {
  HostTensor o, lse, dq, dk, dv;
};

// Forward and backward of a fresh instance (the alternating flaw counts calls per instance). The
// backward takes `given`'s O and LSE when set (complete, as the harness gives them), else its own.
Outputs run(NaiveFlaw flaw, const Problem& p, const Inputs& in, const OutputSample* wanted,
            const Outputs* given = nullptr) {
  Outputs r{poisoned(p.dtype, p.q_shape()), poisoned(DType::fp32, p.lse_shape(), 3), poisoned(p.dtype, p.q_shape()),
            poisoned(p.dtype, p.kv_shape()), poisoned(p.dtype, p.kv_shape())};
  auto impl = make_naive_attention(flaw);
  impl->forward(p, {in.q, in.k, in.v, r.o, r.lse, wanted});
  const Outputs& fwd = given ? *given : r;
  impl->backward(p, {in.q, in.k, in.v, fwd.o, fwd.lse, in.dout, r.dq, r.dk, r.dv, wanted});
  return r;
}

// Every element of `sampled` against `full`: the same bits where wanted(i0, i1, i2), the poison
// elsewhere. Returns the first few differences, empty when none.
template <class Wanted>
std::string differences(const char* name, const HostTensor& full, const HostTensor& sampled, Wanted wanted) {
  const std::uint32_t poison = sampled.dtype() == DType::fp32 ? kPoison32 : kPoison16;
  const Shape& s = full.shape();
  std::ostringstream out;
  int shown = 0;
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t e = 0; e < s[3]; ++e) {
          const bool w = wanted(a, b, c);
          const std::uint32_t expected = w ? full.bits(a, b, c, e) : poison, got = sampled.bits(a, b, c, e);
          if (got != expected && shown++ < 4)
            out << name << "[" << a << "," << b << "," << c << "," << e << "] " << (w ? "wanted" : "not wanted")
                << ": 0x" << std::hex << got << " instead of 0x" << expected << std::dec << "\n";
        }
  return out.str();
}

std::string compare(const Problem& p, const OutputSample& s, const Outputs& full, const Outputs& sampled) {
  const auto row = [&](std::int64_t b, std::int64_t h, std::int64_t i) {
    return s.row((b * p.heads_q + h) * p.seqlen_q + i);
  };
  const auto o_row = [&](std::int64_t b, std::int64_t i, std::int64_t h) { return row(b, h, i); };
  const auto lse_row = [&](std::int64_t b, std::int64_t h, std::int64_t i) { return row(b, h, i); };
  const auto col = [&](std::int64_t b, std::int64_t j, std::int64_t hk) {
    return s.col((b * p.heads_kv + hk) * p.seqlen_k + j);
  };
  return differences("O", full.o, sampled.o, o_row) + differences("LSE", full.lse, sampled.lse, lse_row) +
         differences("dQ", full.dq, sampled.dq, o_row) + differences("dK", full.dk, sampled.dk, col) +
         differences("dV", full.dv, sampled.dv, col);
}

class NaiveSampled : public ::testing::TestWithParam<NaiveFlaw> {};

TEST_P(NaiveSampled, WantedOutputsAreThoseOfTheFullRunAndNothingElseIsWritten) {
  const NaiveFlaw flaw = GetParam();
  std::uint64_t seed = 40;
  for (const Problem& p : problems()) {
    const Inputs in = generate_inputs(p, Distribution{}, ++seed);
    const Outputs full = run(flaw, p, in, nullptr);
    const struct {
      const char* name;
      bool rows, cols;
    } kinds[] = {{"rows and columns", true, true}, {"rows, no columns", true, false}, {"columns only", false, true}};
    for (const auto& kind : kinds) {
      SCOPED_TRACE(p.describe() + ", " + kind.name);
      const OutputSample s = sample_of(p, kind.rows, kind.cols);
      const Outputs sampled = run(flaw, p, in, &s, &full);
      EXPECT_EQ(compare(p, s, full, sampled), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Flaws, NaiveSampled,
                         ::testing::ValuesIn([] {
                           std::vector<NaiveFlaw> all{NaiveFlaw::none};
                           all.insert(all.end(), std::begin(kNaiveFlaws), std::end(kNaiveFlaws));
                           return all;
                         }()),
                         [](const ::testing::TestParamInfo<NaiveFlaw>& info) {
                           std::string name = info.param == NaiveFlaw::none ? "baseline" : naive_flaw_name(info.param);
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(NaiveSampledShape, ASampleOfAnotherShapeIsRejected) {
  const Problem p = problems()[0];
  const Inputs in = generate_inputs(p, Distribution{}, 1);
  OutputSample s = sample_of(p, true, true);
  s.cols.pop_back();
  auto impl = make_naive_attention();
  Outputs r{poisoned(p.dtype, p.q_shape()), poisoned(DType::fp32, p.lse_shape(), 3), poisoned(p.dtype, p.q_shape()),
            poisoned(p.dtype, p.kv_shape()), poisoned(p.dtype, p.kv_shape())};
  EXPECT_THROW(impl->forward(p, {in.q, in.k, in.v, r.o, r.lse, &s}), std::invalid_argument);
  EXPECT_THROW(impl->backward(p, {in.q, in.k, in.v, r.o, r.lse, in.dout, r.dq, r.dk, r.dv, &s}),
               std::invalid_argument);
}

}  // namespace
}  // namespace flashproof
