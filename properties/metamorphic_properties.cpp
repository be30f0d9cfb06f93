// Metamorphic properties: a transformation of the inputs (a permutation, a scaling, a change the
// mask hides, repeated K/V heads, a batch split) must change the outputs in a known way, or not at all.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {
namespace {

double min_normal(DType t) { return t == DType::fp16 ? 0x1p-14 : 0x1p-126; }
double max_finite(DType t) { return from_bits(t, t == DType::fp16 ? 0x7BFFu : t == DType::bf16 ? 0x7F7Fu : 0x7F7FFFFFu); }

// A permutation of [0, n) drawn from the case's seed (a different stream from the inputs').
std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 rng(seed ^ 0x5DEECE66DULL);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

// A copy of t with its sequence axis (axis 1 of [b, s, h, d]) permuted: out[:, i] = t[:, perm[i]].
HostTensor permute_rows(const HostTensor& t, const std::vector<std::int64_t>& perm) {
  HostTensor out(t.dtype(), t.shape());
  for_each_index(t, [&](const Index& i) {
    out.set_bits(i[0], i[1], i[2], i[3], t.bits(i[0], perm[static_cast<std::size_t>(i[1])], i[2], i[3]));
  });
  return out;
}

}  // namespace

// Permuting keys and values together leaves O and LSE unchanged (no mask): within twice the
// regression tolerance, as each result is allowed that far from the exact one. Judged also when
// the base case fails its check: an order-dependent error shows here independently.
Outcome key_value_permutation(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const std::vector<std::int64_t> perm = permutation(p.seqlen_k, c.seed);
  const Inputs permuted{in.q, permute_rows(in.k, perm), permute_rows(in.v, perm), in.dout};
  const Outputs base = run_implementation(impl, p, false, in);
  const Outputs out = run_implementation(impl, p, false, permuted);
  if (std::string w = outside("O", out.o, base.o, 2 * tensor_check(*r, "O")->tolerance); !w.empty()) return fail(w);
  if (std::string w = outside("LSE", out.lse, base.lse, 2 * tensor_check(*r, "LSE")->tolerance); !w.empty())
    return fail(w);
  return {};
}

// Permuting query rows permutes O and LSE, bitwise (no mask).
Outcome query_permutation(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const std::vector<std::int64_t> perm = permutation(p.seqlen_q, c.seed);
  const Inputs permuted{permute_rows(in.q, perm), in.k, in.v, in.dout};
  const Outputs base = run_implementation(impl, p, false, in);
  const Outputs out = run_implementation(impl, p, false, permuted);
  const auto row = [&](const Index& i) { return Index{i[0], perm[static_cast<std::size_t>(i[1])], i[2], i[3]}; };
  const auto lse_row = [&](const Index& i) { return Index{i[0], i[1], perm[static_cast<std::size_t>(i[2])], i[3]}; };
  if (std::string w = bitwise_mismatch("O", out.o, base.o, row); !w.empty()) return fail(w);
  if (std::string w = bitwise_mismatch("LSE", out.lse, base.lse, lse_row); !w.empty()) return fail(w);
  return {};
}

// O(Q, K, f V) = f O(Q, K, V) for f = +-2^e, while nothing overflows; LSE unchanged, bitwise.
// For fp16 the scaling is exact at every step (P and V are at least 2^-24 in magnitude where not
// zero, so no fp32 product or sum underflows), and O must be f O bitwise where it is above the
// smallest normal number (which a subnormal result can round up to), within |f| subnormal
// spacings elsewhere. In bf16 and fp32 a product of a tiny P and a tiny
// V can underflow fp32, where scaling is not exact, so there O may differ by one unit in its last
// place (plus the underflowed products' error, sk 2^-149 |f|).
Outcome value_scaling(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const int e = 1 + static_cast<int>(c.seed % 3);
  const double f = (c.seed / 3) % 2 == 0 ? std::ldexp(1.0, e) : -std::ldexp(1.0, e);
  if (max_abs(in.v) * std::fabs(f) > max_finite(p.dtype) / 2) return holds_with("not judged (f V would overflow)");
  HostTensor scaled(p.dtype, in.v.shape());
  for_each_index(in.v, [&](const Index& i) { scaled.set(i[0], i[1], i[2], i[3], f * value_at(in.v, i)); });
  const Outputs base = run_implementation(impl, p, false, in);
  const Outputs out = run_implementation(impl, p, false, Inputs{in.q, in.k, scaled, in.dout});
  if (std::string w = bitwise_mismatch("LSE", out.lse, base.lse); !w.empty()) return fail(w);
  const double subnormal = from_bits(p.dtype, 1u);  // the smallest subnormal spacing
  const double ulp = std::ldexp(1.0, -dtype_mantissa_bits(p.dtype));
  const double underflow = static_cast<double>(p.seqlen_k) * 0x1p-149 * std::fabs(f);
  std::string why;
  for_each_index(base.o, [&](const Index& i) {
    if (!why.empty()) return;
    const double o = value_at(base.o, i), got = value_at(out.o, i), want = f * o;
    bool ok;
    if (!std::isfinite(o))
      ok = got == want;
    else if (p.dtype != DType::fp16)
      ok = std::fabs(got - want) <= std::max(std::fabs(want) * ulp, std::fabs(f) * subnormal) + underflow;
    else if (std::fabs(o) > min_normal(p.dtype))  // min normal itself may be a rounded subnormal
      ok = got == want;
    else
      ok = std::fabs(got - want) <= std::fabs(f) * subnormal;
    if (!ok)
      why = "O(f V) != f O(V) for f = " + exact(f) + " at " + where("O", i, 4) + ": " + exact(got) + " vs " + exact(want) +
            " (O(V) = " + exact(o) + ")";
  });
  return why.empty() ? Outcome{} : fail(why);
}

// Changing K and V at keys a row cannot see leaves that row's O and LSE bitwise unchanged. The
// keys from a cut onwards are replaced; the rows checked are those whose window ends before it.
Outcome prefix_independence(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  if (p.window_right < 0 || p.seqlen_k < 2) return holds_with("vacuous (no bounded right side)");
  const std::int64_t cut = 1 + static_cast<std::int64_t>(c.seed % static_cast<std::uint64_t>(p.seqlen_k - 1));
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < p.seqlen_q; ++i)
    if (i + p.mask_offset() + p.window_right < cut) rows.push_back(i);
  if (rows.empty()) return holds_with("vacuous (every row sees the cut)");
  const Inputs in = inputs_of(c);
  const Inputs other = generate_inputs(p, c.dist, c.seed + 1);
  HostTensor k = in.k.contiguous_copy(), v = in.v.contiguous_copy();
  for_each_index(k, [&](const Index& i) {
    if (i[1] < cut) return;
    k.set_bits(i[0], i[1], i[2], i[3], bits_at(other.k, i));
    v.set_bits(i[0], i[1], i[2], i[3], bits_at(other.v, i));
  });
  const Outputs base = run_implementation(impl, p, false, in);
  const Outputs out = run_implementation(impl, p, false, Inputs{in.q, k, v, in.dout});
  for (std::int64_t i : rows)
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads_q; ++h) {
        if (out.lse.bits(b, h, i, 0) != base.lse.bits(b, h, i, 0))
          return fail("LSE of row " + std::to_string(i) + " changed when keys >= " + std::to_string(cut) + " changed");
        for (std::int64_t d = 0; d < p.head_dim; ++d)
          if (out.o.bits(b, i, h, d) != base.o.bits(b, i, h, d))
            return fail("O of row " + std::to_string(i) + " changed when keys >= " + std::to_string(cut) + " changed");
      }
  return {};
}

// GQA equals MHA with the K/V heads repeated: O, LSE bitwise; dQ bitwise where the backward is
// reproducible (dK, dV differ by summation order and are left to the differential check).
Outcome gqa_equals_mha(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  if (p.heads_q == p.heads_kv) return holds_with("vacuous (MHA)");
  Problem mha = p;
  mha.heads_kv = p.heads_q;
  const Inputs in = inputs_of(c);
  HostTensor k(p.dtype, mha.kv_shape()), v(p.dtype, mha.kv_shape());
  for_each_index(k, [&](const Index& i) {
    const Index src{i[0], i[1], p.kv_head(i[2]), i[3]};
    k.set_bits(i[0], i[1], i[2], i[3], bits_at(in.k, src));
    v.set_bits(i[0], i[1], i[2], i[3], bits_at(in.v, src));
  });
  const bool dq = c.backward && impl.bitwise_reproducible_backward();
  const Outputs base = run_implementation(impl, p, dq, in);
  const Outputs out = run_implementation(impl, mha, dq, Inputs{in.q, k, v, in.dout});
  if (std::string w = bitwise_mismatch("O", out.o, base.o); !w.empty()) return fail("MHA vs GQA: " + w);
  if (std::string w = bitwise_mismatch("LSE", out.lse, base.lse); !w.empty()) return fail("MHA vs GQA: " + w);
  if (dq)
    if (std::string w = bitwise_mismatch("dQ", out.dq, base.dq); !w.empty()) return fail("MHA vs GQA: " + w);
  return {};
}

// Batch entries are independent: entry b of a batched run equals the run on entry b alone,
// bitwise (dQ only where the backward is reproducible).
Outcome batch_independence(AttentionImpl& impl, const Case& c) {
  Problem p = c.problem;
  p.batch = std::max<std::int64_t>(p.batch, 2);
  const Inputs in = generate_inputs(p, c.dist, c.seed);
  const Outputs all = run_implementation(impl, p, c.backward, in);
  Problem one = p;
  one.batch = 1;
  const auto slice = [](const HostTensor& t, std::int64_t b) {
    Shape s = t.shape();
    s[0] = 1;
    HostTensor out(t.dtype(), s, t.rank());
    for_each_index(out, [&](const Index& i) { out.set_bits(0, i[1], i[2], i[3], t.bits(b, i[1], i[2], i[3])); });
    return out;
  };
  const bool dq = impl.bitwise_reproducible_backward();
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const Outputs alone = run_implementation(impl, one, c.backward,
                                             Inputs{slice(in.q, b), slice(in.k, b), slice(in.v, b), slice(in.dout, b)});
    const std::string entry = "batch entry " + std::to_string(b) + ": ";
    if (std::string w = bitwise_mismatch("O", alone.o, slice(all.o, b)); !w.empty()) return fail(entry + w);
    if (std::string w = bitwise_mismatch("LSE", alone.lse, slice(all.lse, b)); !w.empty()) return fail(entry + w);
    if (!c.backward) continue;
    if (dq)
      if (std::string w = bitwise_mismatch("dQ", alone.dq, slice(all.dq, b)); !w.empty()) return fail(entry + w);
    if (std::string w = bitwise_mismatch("dK", alone.dk, slice(all.dk, b)); !w.empty()) return fail(entry + w);
    if (std::string w = bitwise_mismatch("dV", alone.dv, slice(all.dv, b)); !w.empty()) return fail(entry + w);
  }
  return {};
}

}  // namespace flashproof::properties::checks

namespace flashproof::properties::checks {
namespace {

// The packed batch a case becomes: its own lengths, a sequence without rows, one without keys,
// a shorter one and a one-row one (docs/spec.md "Packed batches"), with the case's heads, head
// dim, dtype, scale and mask.
Problem packed_from(const Problem& dense) {
  Problem p = dense;
  p.batch = 1;
  const std::int64_t sq = dense.seqlen_q, sk = dense.seqlen_k;
  const std::int64_t lengths[][2] = {{sq, sk}, {0, std::min<std::int64_t>(sk, 3)}, {std::max<std::int64_t>(1, sq / 2), std::max<std::int64_t>(1, sk / 3)},
                                     {std::min<std::int64_t>(sq, 2), 0}, {1, sk}};
  p.cu_seqlens_q = {0}, p.cu_seqlens_k = {0};
  for (const auto& [q, k] : lengths) {
    p.cu_seqlens_q.push_back(p.cu_seqlens_q.back() + q);
    p.cu_seqlens_k.push_back(p.cu_seqlens_k.back() + k);
  }
  p.seqlen_q = p.cu_seqlens_q.back(), p.seqlen_k = p.cu_seqlens_k.back();
  return p;
}

// Rows [begin, begin + n) of axis `axis` of t, as a contiguous copy.
HostTensor rows_of(const HostTensor& t, int axis, std::int64_t begin, std::int64_t n) {
  Shape s = t.shape();
  s[axis] = n;
  HostTensor out(t.dtype(), s, t.rank());
  for_each_index(out, [&](const Index& i) {
    Index from = i;
    from[axis] += begin;
    out.set_bits(i[0], i[1], i[2], i[3], t.bits(from[0], from[1], from[2], from[3]));
  });
  return out;
}

// The first element of t that is not `expected` exactly (empty when none).
std::string not_all(const char* name, const HostTensor& t, double expected) {
  std::string why;
  for_each_index(t, [&](const Index& i) {
    const double x = value_at(t, i);
    if (why.empty() && !(x == expected))
      why = std::string(name) + " is " + std::to_string(x) + " at " + where(name, i, t.rank()) + ", not exactly " +
            std::to_string(expected);
  });
  return why;
}

}  // namespace

// A packed batch equals its sequences run alone as dense problems, bitwise (O, LSE, dK, dV; dQ
// where the backward is reproducible), and its sequences without keys or rows get the exact
// empty values, with NaN in the inputs no output may read (those sequences' own rows).
Outcome packed_equals_sequences(AttentionImpl& impl, const Case& c) {
  const Problem p = packed_from(c.problem);
  const Inputs in = generate_inputs(p, c.dist, c.seed);
  // The packed run's inputs have NaN where nothing may read them: the keys and values of a
  // sequence without rows, the queries and dO of a sequence without keys.
  Inputs poisoned{in.q.contiguous_copy(), in.k.contiguous_copy(), in.v.contiguous_copy(), in.dout.contiguous_copy()};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t s = 0; s < p.sequences(); ++s) {
    const std::int64_t q0 = p.cu_seqlens_q[s], q1 = p.cu_seqlens_q[s + 1], k0 = p.cu_seqlens_k[s], k1 = p.cu_seqlens_k[s + 1];
    const auto poison = [&](HostTensor& t, std::int64_t from, std::int64_t to) {
      for_each_index(t, [&](const Index& i) {
        if (i[1] >= from && i[1] < to) t.set(i[0], i[1], i[2], i[3], nan);
      });
    };
    if (q1 == q0) poison(poisoned.k, k0, k1), poison(poisoned.v, k0, k1);
    if (k1 == k0) poison(poisoned.q, q0, q1), poison(poisoned.dout, q0, q1);
  }
  const Outputs all = run_implementation(impl, p, c.backward, poisoned);
  const bool dq = impl.bitwise_reproducible_backward();
  for (std::int64_t s = 0; s < p.sequences(); ++s) {
    const std::int64_t q0 = p.cu_seqlens_q[s], k0 = p.cu_seqlens_k[s];
    Problem one = p;
    one.cu_seqlens_q.clear(), one.cu_seqlens_k.clear();
    one.seqlen_q = p.cu_seqlens_q[s + 1] - q0, one.seqlen_k = p.cu_seqlens_k[s + 1] - k0;
    const std::string entry = "sequence " + std::to_string(s) + " (" + std::to_string(one.seqlen_q) + " rows, " +
                              std::to_string(one.seqlen_k) + " keys): ";
    if (one.seqlen_q == 0 || one.seqlen_k == 0) {  // no dense problem: the exact empty values
      if (one.seqlen_q > 0) {  // rows without keys: O = 0, LSE = +inf, dQ = 0
        const HostTensor o = rows_of(all.o, 1, q0, one.seqlen_q), lse = rows_of(all.lse, 2, q0, one.seqlen_q);
        if (std::string w = not_all("O", o, 0.0); !w.empty()) return fail(entry + w);
        if (std::string w = not_all("LSE", lse, INFINITY); !w.empty()) return fail(entry + w);
        if (c.backward)
          if (std::string w = not_all("dQ", rows_of(all.dq, 1, q0, one.seqlen_q), 0.0); !w.empty()) return fail(entry + w);
      }
      if (one.seqlen_k > 0 && c.backward) {  // keys without rows: dK = dV = 0
        if (std::string w = not_all("dK", rows_of(all.dk, 1, k0, one.seqlen_k), 0.0); !w.empty()) return fail(entry + w);
        if (std::string w = not_all("dV", rows_of(all.dv, 1, k0, one.seqlen_k), 0.0); !w.empty()) return fail(entry + w);
      }
      continue;
    }
    const Inputs part{rows_of(in.q, 1, q0, one.seqlen_q), rows_of(in.k, 1, k0, one.seqlen_k),
                      rows_of(in.v, 1, k0, one.seqlen_k), rows_of(in.dout, 1, q0, one.seqlen_q)};
    const Outputs alone = run_implementation(impl, one, c.backward, part);
    if (std::string w = bitwise_mismatch("O", rows_of(all.o, 1, q0, one.seqlen_q), alone.o); !w.empty()) return fail(entry + w);
    if (std::string w = bitwise_mismatch("LSE", rows_of(all.lse, 2, q0, one.seqlen_q), alone.lse); !w.empty())
      return fail(entry + w);
    if (!c.backward) continue;
    if (dq)
      if (std::string w = bitwise_mismatch("dQ", rows_of(all.dq, 1, q0, one.seqlen_q), alone.dq); !w.empty())
        return fail(entry + w);
    if (std::string w = bitwise_mismatch("dK", rows_of(all.dk, 1, k0, one.seqlen_k), alone.dk); !w.empty()) return fail(entry + w);
    if (std::string w = bitwise_mismatch("dV", rows_of(all.dv, 1, k0, one.seqlen_k), alone.dv); !w.empty()) return fail(entry + w);
  }
  return {};
}

}  // namespace flashproof::properties::checks
