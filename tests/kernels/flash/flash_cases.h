// The flash kernels' test matrix, shared by FA1 and FA2 and by their `emulated` and `gpu` tests:
// every FA2 head-dim bucket (FA1 pads them into its three), no mask / causal / local, GQA 1, 2 and
// MQA, seqlen_q != seqlen_k both ways including 1, ragged last blocks, fp16 and bf16, and edge cases
// (empty rows, extreme logits, deterministic backward, packed batches), each checked forward and
// backward through the harness's verdict. Also a check the verdict cannot make: outputs written exactly inside
// strided views.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/generators.h"
#include "harness/check.h"
#include "tests/harness/pass_or_vacuous.h"
#include "kernels/registry.h"

namespace flashproof::flash_tests {

struct FlashCase {
  std::string label;
  Problem problem;
  std::string dist = "normal";
  std::string impl;
  bool backward = true;
};

inline void PrintTo(const FlashCase& c, std::ostream* os) { *os << c.label; }

inline constexpr std::uint64_t kCaseSeed = 7;

// The first element of two same-shape tensors whose bits differ ("dQ[0,3,1,7] differs"), or empty.
inline std::string first_difference(const char* name, const HostTensor& a, const HostTensor& b) {
  const Shape& s = a.shape();
  for (std::int64_t i = 0; i < s[0]; ++i)
    for (std::int64_t j = 0; j < s[1]; ++j)
      for (std::int64_t k = 0; k < s[2]; ++k)
        for (std::int64_t l = 0; l < s[3]; ++l)
          if (a.bits(i, j, k, l) != b.bits(i, j, k, l))
            return std::string(name) + "[" + std::to_string(i) + "," + std::to_string(j) + "," + std::to_string(k) +
                   "," + std::to_string(l) + "] differs";
  return {};
}

inline Problem make_problem(DType dtype, std::int64_t d, std::int64_t hq, std::int64_t hkv, std::int64_t sq,
                     std::int64_t sk, std::int64_t left, std::int64_t right) {
  Problem p;
  p.dtype = dtype;
  p.head_dim = d;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.window_left = left;
  p.window_right = right;
  return p;
}

// p as a packed batch of the given (query rows, keys) sequences.
inline Problem packed(Problem p, const std::vector<std::pair<std::int64_t, std::int64_t>>& sequences) {
  p.cu_seqlens_q = {0};
  p.cu_seqlens_k = {0};
  for (const auto& [rows, keys] : sequences) {
    p.cu_seqlens_q.push_back(p.cu_seqlens_q.back() + rows);
    p.cu_seqlens_k.push_back(p.cu_seqlens_k.back() + keys);
  }
  p.seqlen_q = p.cu_seqlens_q.back();
  p.seqlen_k = p.cu_seqlens_k.back();
  return p;
}

inline std::vector<FlashCase> matrix_cases(const std::string& impl) {
  std::vector<FlashCase> cases;
  const int buckets[] = {32, 64, 96, 128, 160, 192, 224, 256};
  struct Mask {
    const char* name;
    std::int64_t left, right;
  };
  const Mask masks[] = {{"none", -1, -1}, {"causal", -1, 0}, {"local7_2", 7, 2}};
  struct Heads {
    std::int64_t q, kv;
  };
  const Heads heads[] = {{2, 2}, {4, 2}, {3, 1}};  // GQA ratio 1, 2, MQA
  struct Lengths {
    std::int64_t q, k;
  };
  // Ragged against every block size in use (32..128), 1 on either side, and several key blocks per
  // query block (and the reverse), so that partial dQ sums from different key blocks meet.
  const Lengths small[] = {{1, 300}, {300, 1}, {260, 45}, {45, 260}, {140, 140}, {129, 400}};
  const Lengths large_d[] = {{1, 77}, {77, 1}, {66, 45}, {45, 93}, {70, 70}, {33, 130}};
  int i = 0;
  for (int bucket : buckets) {
    for (DType dtype : {DType::fp16, DType::bf16}) {
      // Head dims off the multiples of 8 in half the cases, so padding is covered in every bucket.
      const std::int64_t d = (i % 2 == 0) ? bucket : bucket - 5;
      const Mask& m = masks[i % 3];
      const Heads& h = heads[(i / 2) % 3];
      const Lengths& len = (bucket > 128 ? large_d : small)[(i / 3 + i) % 6];
      FlashCase c;
      c.impl = impl;
      c.problem = make_problem(dtype, d, h.q, h.kv, len.q, len.k, m.left, m.right);
      c.label = std::string(dtype_name(dtype)) + "_d" + std::to_string(d) + "_" + m.name + "_hq" +
                std::to_string(h.q) + "_hkv" + std::to_string(h.kv) + "_sq" + std::to_string(len.q) + "_sk" +
                std::to_string(len.k);
      cases.push_back(c);
      ++i;
    }
  }
  return cases;
}

// deterministic_impl: the implementation whose backward is bitwise reproducible (fa2-deterministic;
// FA1's always is).
inline std::vector<FlashCase> edge_cases(const std::string& impl, const std::string& deterministic_impl) {
  std::vector<FlashCase> cases;
  auto add = [&](std::string label, Problem p, std::string dist = "normal", bool backward = true,
                 const std::string& name = {}) {
    cases.push_back({std::move(label), p, std::move(dist), name.empty() ? impl : name, backward});
  };
  // Causal with seqlen_q > seqlen_k: the first rows see no key (O = 0, LSE = +inf, zero gradients),
  // and whole query blocks are empty.
  add("causal_sq_gt_sk_empty_rows", make_problem(DType::fp16, 64, 2, 1, 200, 50, -1, 0));
  // A local window narrower than a block, with rows that see nothing at both ends.
  add("local_window_empty_rows", make_problem(DType::bf16, 32, 2, 2, 150, 90, 0, 0));
  add("local_left_only", make_problem(DType::fp16, 128, 1, 1, 100, 180, 20, -1));
  add("single_query_single_key", make_problem(DType::fp16, 8, 1, 1, 1, 1, -1, -1));
  add("seqlen_q_1_causal", make_problem(DType::bf16, 64, 4, 1, 1, 150, -1, 0));
  add("batch_3", [] {
    Problem p = make_problem(DType::fp16, 48, 2, 1, 33, 65, -1, 0);
    p.batch = 3;
    return p;
  }());
  add("explicit_scale", [] {
    Problem p = make_problem(DType::fp16, 64, 1, 1, 40, 40, -1, -1);
    p.scale = 0.3f;
    return p;
  }());
  // Very large logits (standard deviation 1e18 of the scaled logits, maxima near 2^62): the
  // scale-before-max rule keeps every weight in [0, 1].
  // fp16 forward only: the exact dQ and dK of these inputs exceed fp16's range.
  add("large_logits_fp16", make_problem(DType::fp16, 64, 2, 1, 70, 90, -1, 0), "large-logits:1e18", false);
  add("large_logits_4e18_fp16", make_problem(DType::fp16, 32, 1, 1, 40, 300, -1, -1), "large-logits:4e18", false);
  add("large_logits_bf16", make_problem(DType::bf16, 128, 1, 1, 65, 129, -1, -1), "large-logits:1e18");
  add("dominant_key", make_problem(DType::fp16, 64, 2, 2, 64, 150, -1, -1), "dominant-key");
  add("growing_max", make_problem(DType::bf16, 32, 1, 1, 50, 300, -1, -1), "growing-max");
  add("scaled_x4_ragged", make_problem(DType::fp16, 96, 2, 1, 131, 131, -1, 0), "scaled:4");
  add("subnormal_inputs", make_problem(DType::fp16, 64, 1, 1, 40, 60, -1, -1), "subnormal");
  add("deterministic_gqa_causal", make_problem(DType::fp16, 64, 4, 2, 150, 200, -1, 0), "normal", true, deterministic_impl);
  add("deterministic_bf16_local", make_problem(DType::bf16, 160, 2, 1, 90, 70, 30, 5), "normal", true, deterministic_impl);
  // Packed batches (docs/fa2.md "Packed batches"): sequences without rows or keys, of one row and
  // one key, causal with more rows than keys, around the tile sizes; GQA; one long among short ones.
  add("packed_causal_gqa", packed(make_problem(DType::fp16, 64, 4, 2, 0, 0, -1, 0),
                                  {{0, 5}, {1, 1}, {37, 20}, {5, 0}, {130, 140}, {64, 63}}));
  add("packed_deterministic_local",
      packed(make_problem(DType::bf16, 128, 2, 1, 0, 0, 7, 2), {{2, 3}, {129, 127}, {1, 9}, {63, 64}}), "normal", true,
      deterministic_impl);
  return cases;
}

// Empty unless the case's implementation lacks its head-dim bucket in this build (a narrowed
// FLASHPROOF_FA*_HEAD_DIMS); then the reason, for GTEST_SKIP. CI builds every bucket.
inline std::string bucket_not_built(const FlashCase& fc) {
  const AttentionImpl* impl = find_implementation(fc.impl);
  const std::string why = impl == nullptr ? std::string() : impl->unsupported_reason(fc.problem, fc.backward);
  return why.find("is not built") == std::string::npos ? std::string() : why;
}

// The harness case of a test case (inputs from kCaseSeed).
inline Case to_case(const FlashCase& fc) {
  Case c;
  c.problem = fc.problem;
  c.dist = *parse_distribution(fc.dist);
  c.seed = kCaseSeed;
  c.impl = fc.impl;
  c.backward = fc.backward;
  return c;
}

// Runs the case through the harness (inputs, implementation, reference, baseline rule) and
// expects a pass on every tensor, on the expected target ("emulated" or "gpu"). The record goes to
// *record when given (its tensors' errors.rel_floor are the rounding floors).
inline void expect_case_passes(const FlashCase& fc, const char* where, CheckRecord* record = nullptr) {
  const CheckRecord r = run_check(to_case(fc));
  if (record != nullptr) *record = r;
  ASSERT_EQ(r.impl_where, where);
  ASSERT_TRUE(r.in_domain) << r.domain_note;
  ASSERT_EQ(r.tensors.size(), fc.backward ? 5u : 2u);
  for (const TensorCheck& t : r.tensors) {
    std::string why;
    for (const std::string& s : t.reasons) why += s + "; ";
    EXPECT_TRUE(test_impls::pass_or_vacuous(t))
        << t.name << " " << verdict_name(t.verdict) << ": max_abs " << t.errors.max_abs << ", tolerance "
        << t.tolerance << ": " << why;
    EXPECT_FALSE(t.regression) << t.name << ": max_abs " << t.errors.max_abs << " above the baseline rule's "
                               << t.tolerance;
    EXPECT_EQ(t.errors.nan_mismatch, 0u) << t.name;
  }
}

// ---- outputs written exactly inside strided views ----

inline constexpr std::uint16_t kPoison = 0x7E5A;

// A [b, s, h, d] view into storage with `extra` unused elements after each head row, all poisoned.
inline HostTensor poisoned_view(DType t, Shape shape, std::int64_t extra) {
  const std::int64_t row = shape[3] + extra;
  HostTensor storage(t, {shape[0], shape[1], shape[2], row});
  storage.fill_storage_bits(kPoison);
  return storage.view(shape, {shape[1] * shape[2] * row, shape[2] * row, row, 1}, 0);
}

struct WriteCounts {
  std::int64_t unwritten = 0;  // poisoned elements inside the view
  std::int64_t stray = 0;      // changed elements outside it
};

inline WriteCounts count_writes(const HostTensor& t) {
  const Shape& s = t.shape();
  const std::int64_t row = t.strides()[2];
  WriteCounts w;
  for (std::int64_t i = 0; i < t.storage_elements(); ++i) {
    const bool inside = i % row < s[3];
    const bool poison = t.raw_bits(i) == kPoison;
    if (inside && poison) ++w.unwritten;
    if (!inside && !poison) ++w.stray;
  }
  return w;
}

inline void expect_written_exactly_in_view(const HostTensor& t, const char* name) {
  const WriteCounts w = count_writes(t);
  EXPECT_EQ(w.unwritten, 0) << name << ": elements of the view never written";
  EXPECT_EQ(w.stray, 0) << name << ": elements outside the view written";
}

// Forward and backward of `impl_name` into poisoned strided views; d = 37 takes the padded path
// (a packed copy), d = 64 the direct one.
inline void expect_outputs_written_exactly_in_views(const std::string& impl_name) {
  for (std::int64_t d : {64, 37}) {
    Problem p = make_problem(DType::fp16, d, 4, 2, 70, 45, -1, 0);
    const Inputs in = generate_inputs(p, Distribution{}, 3);
    AttentionImpl* impl = find_implementation(impl_name);
    ASSERT_NE(impl, nullptr);
    HostTensor o = poisoned_view(p.dtype, p.q_shape(), 8);
    HostTensor lse(DType::fp32, p.lse_shape(), 3);
    impl->forward(p, {in.q, in.k, in.v, o, lse});
    expect_written_exactly_in_view(o, "O");
    HostTensor dq = poisoned_view(p.dtype, p.q_shape(), 16);
    HostTensor dk = poisoned_view(p.dtype, p.kv_shape(), 8);
    HostTensor dv = poisoned_view(p.dtype, p.kv_shape(), 24);
    impl->backward(p, {in.q, in.k, in.v, o, lse, in.dout, dq, dk, dv});
    expect_written_exactly_in_view(dq, "dQ");
    expect_written_exactly_in_view(dk, "dK");
    expect_written_exactly_in_view(dv, "dV");
  }
}

inline std::vector<std::uint32_t> all_bits(const HostTensor& t) {
  std::vector<std::uint32_t> b(static_cast<std::size_t>(t.storage_elements()));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = t.raw_bits(static_cast<std::int64_t>(i));
  return b;
}

}  // namespace flashproof::flash_tests
