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
#include "tests/sampled_problems.h"

namespace flashproof {
namespace {

using testing_support::small_masked_problems;
using testing_support::spread_sample;

struct Outputs {
  HostTensor o, lse, dq, dk, dv;
};

Outputs poisoned_outputs(const Problem& p) {
  return {poisoned_output(p.dtype, p.q_shape()), poisoned_output(DType::fp32, p.lse_shape(), 3),
          poisoned_output(p.dtype, p.q_shape()), poisoned_output(p.dtype, p.kv_shape()),
          poisoned_output(p.dtype, p.kv_shape())};
}

// Forward and backward of a fresh instance (the alternating flaw counts calls per instance). The
// backward takes `given`'s O and LSE when set (complete, as the harness gives them), else its own.
Outputs run(NaiveFlaw flaw, const Problem& p, const Inputs& in, const OutputSample* wanted,
            const Outputs* given = nullptr) {
  Outputs r = poisoned_outputs(p);
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
  const std::uint32_t poison = output_poison_bits(sampled.dtype());
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
  for (const Problem& p : small_masked_problems()) {
    const Inputs in = generate_inputs(p, Distribution{}, ++seed);
    const Outputs full = run(flaw, p, in, nullptr);
    const struct {
      const char* name;
      bool rows, cols;
    } kinds[] = {{"rows and columns", true, true}, {"rows, no columns", true, false}, {"columns only", false, true}};
    for (const auto& kind : kinds) {
      SCOPED_TRACE(p.describe() + ", " + kind.name);
      const OutputSample s = spread_sample(p, kind.rows, kind.cols);
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
  const Problem p = small_masked_problems()[0];
  const Inputs in = generate_inputs(p, Distribution{}, 1);
  OutputSample s = spread_sample(p, true, true);
  s.cols.pop_back();
  auto impl = make_naive_attention();
  Outputs r = poisoned_outputs(p);
  EXPECT_THROW(impl->forward(p, {in.q, in.k, in.v, r.o, r.lse, &s}), std::invalid_argument);
  EXPECT_THROW(impl->backward(p, {in.q, in.k, in.v, r.o, r.lse, in.dout, r.dq, r.dk, r.dv, &s}),
               std::invalid_argument);
}

}  // namespace
}  // namespace flashproof
