// Packed (variable-length) batches in the FA2 and FA1 kernels on the emulator (label `emulated`;
// docs/fa2.md and docs/fa1.md, "Packed batches"):
// 1. Bitwise, metamorphic: a packed batch runs each sequence as the dense problem of its own
//    lengths at a row offset, so each sequence's O, LSE, dQ, dK and dV must be bit for bit those of
//    the sequence run alone, dense, even with NaN written into every row of its neighbours (Q, K, V,
//    O, dO, LSE). A sequence with no key: O = 0, LSE = +inf, dQ = 0; with no query: dK = dV = 0.
//    fa2 adds dQ with atomics in whatever order its key blocks run, which parallel blocks vary
//    from run to run (on a GPU as on the emulator's host threads); its runs here take one host
//    thread, blocks in index order, where a sequence's key blocks add in the same order packed as
//    alone, so its dQ too must be bit for bit the same.
// 2. The harness's certified check (run_check) on packed cases, forward and backward.
// 3. Each check fails on a broken call: the kernels given cu_seqlens_k shifted by one key against
//    the problem judged (a read across a sequence boundary).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/generators.h"
#include "kernels/emu/emulator.h"
#include "harness/check.h"
#include "tests/harness/pass_or_vacuous.h"
#include "tests/kernels/flash/flash_cases.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

using namespace flash_tests;

const bool kForceEmulator = [] { return setenv("FLASHPROOF_TARGET", "emulated", 1) == 0; }();

struct Lengths {
  std::int64_t q, k;
};

struct PackedCase {
  std::string label;
  std::string impl;
  DType dtype;
  std::int64_t head_dim, heads_q, heads_kv, left, right;
  std::vector<Lengths> sequences;
};

void PrintTo(const PackedCase& c, std::ostream* os) { *os << c.label; }

Problem packed_problem(const PackedCase& c) {
  Problem p = make_problem(c.dtype, c.head_dim, c.heads_q, c.heads_kv, 0, 0, c.left, c.right);
  p.cu_seqlens_q = {0};
  p.cu_seqlens_k = {0};
  for (const Lengths& l : c.sequences) {
    p.cu_seqlens_q.push_back(p.cu_seqlens_q.back() + l.q);
    p.cu_seqlens_k.push_back(p.cu_seqlens_k.back() + l.k);
  }
  p.seqlen_q = p.cu_seqlens_q.back();
  p.seqlen_k = p.cu_seqlens_k.back();
  return p;
}

// The cases: lengths 0 and 1 on either side, at and around the tile sizes (32..128), one long
// sequence among short ones, totals off every block size, causal with len_q > len_k inside a
// sequence, windows, GQA and MQA, fp16 and bf16, each family and FA2's deterministic backward.
std::vector<PackedCase> packed_cases() {
  const std::vector<Lengths> edges = {{0, 5}, {1, 1}, {37, 20}, {5, 0}, {1, 9}, {9, 1}, {0, 0}, {20, 37}};
  const std::vector<Lengths> tiles = {{63, 64}, {64, 64}, {65, 63}, {128, 129}, {127, 128}, {129, 127}};
  const std::vector<Lengths> one_long = {{2, 3}, {3, 2}, {1, 1}, {260, 300}, {4, 4}, {0, 2}, {6, 1}};
  std::vector<PackedCase> cases;
  for (const char* impl : {"fa2", "fa1"}) {
    const std::string f = impl;
    cases.push_back({f + "_fp16_d64_causal_gqa_edges", f, DType::fp16, 64, 4, 2, -1, 0, edges});
    cases.push_back({f + "_bf16_d128_local_tiles", f, DType::bf16, 128, 2, 2, 7, 2, tiles});
    cases.push_back({f + "_fp16_d32_nomask_mqa_one_long", f, DType::fp16, 32, 3, 1, -1, -1, one_long});
    cases.push_back({f + "_bf16_d256_causal_edges", f, DType::bf16, 256, 2, 1, -1, 0, edges});
    cases.push_back({f + "_bf16_d96_left_only_one_long", f, DType::bf16, 96, 2, 1, 20, -1, one_long});
  }
  cases.push_back({"fa2det_fp16_d64_causal_one_long", "fa2-deterministic", DType::fp16, 64, 4, 2, -1, 0, one_long});
  cases.push_back({"fa2det_bf16_d160_local_tiles", "fa2-deterministic", DType::bf16, 160, 2, 1, 30, 5, tiles});
  return cases;
}

// ---- 1. bitwise against each sequence run alone ----

struct Outputs {
  HostTensor o, lse, dq, dk, dv;
};

Outputs outputs_for(const Problem& p) {
  return {HostTensor(p.dtype, p.q_shape()), HostTensor(DType::fp32, p.lse_shape(), 3), HostTensor(p.dtype, p.q_shape()),
          HostTensor(p.dtype, p.kv_shape()), HostTensor(p.dtype, p.kv_shape())};
}

// Forward, then backward from the forward's O and LSE.
Outputs run(AttentionImpl& impl, const Problem& p, const HostTensor& q, const HostTensor& k, const HostTensor& v,
            const HostTensor& dout) {
  Outputs out = outputs_for(p);
  impl.forward(p, {q, k, v, out.o, out.lse});
  impl.backward(p, {q, k, v, out.o, out.lse, dout, out.dq, out.dk, out.dv});
  return out;
}

std::uint32_t nan_bits(DType t) { return t == DType::fp16 ? 0x7E00u : t == DType::bf16 ? 0x7FC0u : 0x7FC00000u; }

// Rows [begin, end) of a [1, rows, heads, d] tensor (or of a [1, heads, rows] LSE) set to NaN.
void poison_rows(HostTensor& t, std::int64_t begin, std::int64_t end, bool lse = false) {
  const Shape& s = t.shape();
  for (std::int64_t r = begin; r < end; ++r) {
    if (lse) {
      for (std::int64_t h = 0; h < s[1]; ++h) t.set_bits(0, h, r, 0, nan_bits(t.dtype()));
      continue;
    }
    for (std::int64_t h = 0; h < s[2]; ++h)
      for (std::int64_t c = 0; c < s[3]; ++c) t.set_bits(0, r, h, c, nan_bits(t.dtype()));
  }
}

// Rows [from, from + rows) of a packed [1, total, heads, d] tensor as a dense [1, rows, heads, d] one.
HostTensor rows_of(const HostTensor& t, std::int64_t from, std::int64_t rows) {
  const Shape& s = t.shape();
  HostTensor out(t.dtype(), {1, rows, s[2], s[3]});
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t h = 0; h < s[2]; ++h)
      for (std::int64_t c = 0; c < s[3]; ++c) out.set_bits(0, r, h, c, t.bits(0, from + r, h, c));
  return out;
}

// Up to 4 differences between sequence b's rows of the packed outputs and `alone` (the sequence run
// as a dense problem), or, for a sequence without keys or queries, from the empty-sequence values.
void compare_sequence(const Problem& p, std::size_t b, const Outputs& packed, const Outputs* alone,
                      std::vector<std::string>& diffs) {
  const std::int64_t q0 = p.cu_seqlens_q[b], lq = p.cu_seqlens_q[b + 1] - q0;
  const std::int64_t k0 = p.cu_seqlens_k[b], lk = p.cu_seqlens_k[b + 1] - k0;
  const auto note = [&](const std::string& what) {
    if (diffs.size() < 4) diffs.push_back("sequence " + std::to_string(b) + ": " + what);
  };
  const auto rows = [&](const char* name, const HostTensor& t, std::int64_t first, std::int64_t count,
                        const HostTensor* dense) {
    const Shape& s = t.shape();
    for (std::int64_t r = 0; r < count; ++r)
      for (std::int64_t h = 0; h < s[2]; ++h)
        for (std::int64_t c = 0; c < s[3]; ++c) {
          const std::uint32_t got = t.bits(0, first + r, h, c);
          const bool same = dense != nullptr ? got == dense->bits(0, r, h, c) : t.get(0, first + r, h, c) == 0.0;
          if (!same) return note(std::string(name) + "[row " + std::to_string(r) + ", head " + std::to_string(h) +
                                 ", col " + std::to_string(c) + "] differs");
        }
  };
  if (lq > 0) {
    rows("O", packed.o, q0, lq, alone ? &alone->o : nullptr);
    rows("dQ", packed.dq, q0, lq, alone ? &alone->dq : nullptr);
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t r = 0; r < lq; ++r) {
        const std::uint32_t got = packed.lse.bits(0, h, q0 + r);
        const std::uint32_t want = alone ? alone->lse.bits(0, h, r) : 0x7F800000u;  // +inf: no key
        if (got != want) {
          note("LSE[head " + std::to_string(h) + ", row " + std::to_string(r) + "] differs");
          break;
        }
      }
  }
  if (lk > 0) {
    rows("dK", packed.dk, k0, lk, alone ? &alone->dk : nullptr);
    rows("dV", packed.dv, k0, lk, alone ? &alone->dv : nullptr);
  }
}

// Runs `run_problem` (the packed problem, or a broken variant of it) under `impl` twice, NaN in the
// even sequences' rows and then in the odd ones', and compares each unpoisoned sequence with
// `judged`'s sequence run alone. Returns the differences (empty: bitwise equal everywhere).
std::vector<std::string> packed_against_alone(const std::string& impl_name, const Problem& judged,
                                              const Problem& run_problem) {
  AttentionImpl* impl = find_implementation(impl_name);
  if (impl == nullptr) return {"no implementation " + impl_name};
  std::optional<emu::ScopedHostThreads> blocks_in_order;  // atomics in block order (see the top)
  if (!impl->bitwise_reproducible_backward()) blocks_in_order.emplace(1);
  const Inputs in = generate_inputs(judged, Distribution{}, 5);
  const std::size_t sequences = judged.cu_seqlens_q.size() - 1;
  std::vector<std::string> diffs;
  for (std::size_t parity = 0; parity < 2; ++parity) {
    HostTensor q = in.q.contiguous_copy(), k = in.k.contiguous_copy(), v = in.v.contiguous_copy();
    HostTensor dout = in.dout.contiguous_copy();
    for (std::size_t b = parity; b < sequences; b += 2) {
      for (HostTensor* t : {&q, &dout}) poison_rows(*t, judged.cu_seqlens_q[b], judged.cu_seqlens_q[b + 1]);
      for (HostTensor* t : {&k, &v}) poison_rows(*t, judged.cu_seqlens_k[b], judged.cu_seqlens_k[b + 1]);
    }
    Outputs packed = outputs_for(judged);
    impl->forward(run_problem, {q, k, v, packed.o, packed.lse});
    // The backward's O and LSE: the forward's, with the poisoned sequences' rows NaN as well.
    HostTensor o = packed.o.contiguous_copy(), lse = packed.lse.contiguous_copy();
    for (std::size_t b = parity; b < sequences; b += 2) {
      poison_rows(o, judged.cu_seqlens_q[b], judged.cu_seqlens_q[b + 1]);
      poison_rows(lse, judged.cu_seqlens_q[b], judged.cu_seqlens_q[b + 1], /*lse=*/true);
    }
    impl->backward(run_problem, {q, k, v, o, lse, dout, packed.dq, packed.dk, packed.dv});
    for (std::size_t b = 1 - parity; b < sequences; b += 2) {
      const std::int64_t q0 = judged.cu_seqlens_q[b], lq = judged.cu_seqlens_q[b + 1] - q0;
      const std::int64_t k0 = judged.cu_seqlens_k[b], lk = judged.cu_seqlens_k[b + 1] - k0;
      if (lq == 0 || lk == 0) {
        compare_sequence(judged, b, packed, nullptr, diffs);
        continue;
      }
      Problem alone = judged;
      alone.cu_seqlens_q.clear(), alone.cu_seqlens_k.clear();
      alone.seqlen_q = lq, alone.seqlen_k = lk;
      const Outputs dense = run(*impl, alone, rows_of(in.q, q0, lq), rows_of(in.k, k0, lk), rows_of(in.v, k0, lk),
                                rows_of(in.dout, q0, lq));
      compare_sequence(judged, b, packed, &dense, diffs);
    }
  }
  return diffs;
}

// cu_seqlens_k with sequence 0 given one key more (of sequence 1 when it has keys; the shift moves
// every later sequence's first key by one).
Problem keys_shifted_by_one(Problem p) {
  for (std::size_t b = 1; b + 1 < p.cu_seqlens_k.size(); ++b)
    if (p.cu_seqlens_k[b] < p.cu_seqlens_k[b + 1]) {
      ++p.cu_seqlens_k[b];
      return p;
    }
  return p;
}

class PackedBatch : public ::testing::TestWithParam<PackedCase> {};

TEST_P(PackedBatch, EachSequenceIsBitwiseItsDenseRunDespiteNaNNeighbours) {
  const Problem p = packed_problem(GetParam());
  FlashCase fc{GetParam().label, p, "normal", GetParam().impl, true};
  if (const std::string why = bucket_not_built(fc); !why.empty()) GTEST_SKIP() << why;
  const std::vector<std::string> diffs = packed_against_alone(GetParam().impl, p, p);
  EXPECT_TRUE(diffs.empty()) << diffs.front();
}

TEST_P(PackedBatch, HarnessCertifiedCheckPasses) {
  FlashCase fc{GetParam().label, packed_problem(GetParam()), "normal", GetParam().impl, true};
  if (const std::string why = bucket_not_built(fc); !why.empty()) GTEST_SKIP() << why;
  CheckRecord r;
  expect_case_passes(fc, "emulated", &r);
  // Judged, not waved through: the whole record passes, each tensor by its bound.
  EXPECT_EQ(r.verdict, Verdict::pass);
  for (const TensorCheck& t : r.tensors) EXPECT_EQ(t.verdict, Verdict::pass) << t.name << " " << t.vacuous;
}

INSTANTIATE_TEST_SUITE_P(Cases, PackedBatch, ::testing::ValuesIn(packed_cases()),
                         [](const auto& info) { return info.param.label; });

// ---- 3. the checks fail on a read across a sequence boundary ----

PackedCase boundary_case(const std::string& impl) {
  return {impl, impl, DType::fp16, 64, 2, 1, -1, 0, {{20, 30}, {40, 33}, {1, 17}, {70, 65}}};
}

TEST(PackedBatchBroken, ShiftedKeyOffsetsBreakTheBitwiseCheck) {
  for (const char* impl : {"fa2", "fa1"}) {
    const Problem p = packed_problem(boundary_case(impl));
    const Problem shifted = keys_shifted_by_one(p);
    ASSERT_NE(shifted.cu_seqlens_k, p.cu_seqlens_k);
    EXPECT_FALSE(packed_against_alone(impl, p, shifted).empty()) << impl;
  }
}

// An implementation that passes the kernels cu_seqlens_k shifted by one key against the problem
// the harness judges.
class ShiftedKeys final : public AttentionImpl {
 public:
  explicit ShiftedKeys(AttentionImpl& base) : base_(base) {}
  std::string name() const override { return base_.name() + "-shifted-keys"; }
  std::string description() const override { return "cu_seqlens_k shifted by one key"; }
  std::string where() const override { return base_.where(); }
  Support declared_support() const override { return base_.declared_support(); }
  ArithmeticModel arithmetic_model() const override { return base_.arithmetic_model(); }
  GqaGradientReduction gqa_gradient_reduction() const override { return base_.gqa_gradient_reduction(); }
  std::string unsupported_reason(const Problem& p, bool backward) const override {
    return base_.unsupported_reason(p, backward);
  }
  void forward(const Problem& p, const ForwardArgs& a) override { base_.forward(keys_shifted_by_one(p), a); }
  void backward(const Problem& p, const BackwardArgs& a) override { base_.backward(keys_shifted_by_one(p), a); }

 private:
  AttentionImpl& base_;
};

TEST(PackedBatchBroken, ShiftedKeyOffsetsFailTheHarnessCheck) {
  for (const char* impl : {"fa2", "fa1"}) {
    AttentionImpl* base = find_implementation(impl);
    ASSERT_NE(base, nullptr);
    ShiftedKeys broken(*base);
    Case c = to_case({impl, packed_problem(boundary_case(impl)), "normal", impl, true});
    const CheckRecord ok = run_check(c, *base);
    EXPECT_TRUE(test_impls::pass_or_vacuous(ok)) << impl << ": the unbroken call must pass";
    const CheckRecord r = run_check(c, broken);
    EXPECT_EQ(r.verdict, Verdict::fail) << impl << ": a read across a sequence boundary passed";
  }
}

}  // namespace
}  // namespace flashproof
