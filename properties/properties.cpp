#include "properties/properties.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <tuple>

#include "bounds/implementation_bounds.h"
#include "core/rng.h"
#include "kernels/algo/mask.h"
#include "kernels/emu/emulator.h"
#include "kernels/registry.h"
#include "properties/gradient_check.h"

namespace flashproof::properties {
namespace {

using Index = std::array<std::int64_t, 4>;

template <class F>
void for_each_index(const HostTensor& t, F f) {
  const Shape& s = t.shape();
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d) f(Index{a, b, c, d});
}

std::uint32_t bits_at(const HostTensor& t, const Index& i) { return t.bits(i[0], i[1], i[2], i[3]); }
double value_at(const HostTensor& t, const Index& i) { return t.get(i[0], i[1], i[2], i[3]); }

std::string where(const char* tensor, const Index& i, int rank) {
  std::string s = std::string(tensor) + "[" + std::to_string(i[0]);
  for (int k = 1; k < rank; ++k) (s += ',') += std::to_string(i[k]);  // not "," + ...: GCC 12 -Wrestrict false positive
  return s + "]";
}

std::string hex(std::uint32_t b) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", b);
  return buf;
}

std::string exact(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

Outcome fail(std::string why) { return {false, std::move(why), {}}; }
Outcome holds_with(std::string tag) { return {true, {}, {std::move(tag)}}; }

// Element `i` of `actual` must have the bits of element map(i) of `expected`; the first mismatch
// is the reason.
template <class Map>
std::string bitwise_mismatch(const char* name, const HostTensor& actual, const HostTensor& expected, Map map) {
  std::string why;
  for_each_index(actual, [&](const Index& i) {
    if (!why.empty()) return;
    const std::uint32_t a = bits_at(actual, i), e = bits_at(expected, map(i));
    if (a != e)
      why = std::string(name) + " not bitwise equal at " + where(name, i, actual.rank()) + ": " + hex(a) + " vs " + hex(e);
  });
  return why;
}

std::string bitwise_mismatch(const char* name, const HostTensor& actual, const HostTensor& expected) {
  return bitwise_mismatch(name, actual, expected, [](const Index& i) { return i; });
}

double min_normal(DType t) { return t == DType::fp16 ? 0x1p-14 : 0x1p-126; }
double max_finite(DType t) { return from_bits(t, t == DType::fp16 ? 0x7BFFu : t == DType::bf16 ? 0x7F7Fu : 0x7F7FFFFFu); }
double max_abs(const HostTensor& t) {
  double m = 0;
  for_each_index(t, [&](const Index& i) { m = std::max(m, std::fabs(value_at(t, i))); });
  return m;
}

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

Inputs inputs_of(const Case& c) { return generate_inputs(c.problem, c.dist, c.seed); }

// The case's harness check; nullopt when the inputs are outside SPEC's domain (nothing judged).
std::optional<CheckRecord> judged(AttentionImpl& impl, const Case& c) {
  CheckRecord r = run_check(c, impl);
  if (!r.inputs_in_domain) return std::nullopt;
  return r;
}

const TensorCheck* tensor_check(const CheckRecord& r, const std::string& name) {
  for (const TensorCheck& t : r.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// |a - b| <= allowed at every element (equal infinities agree; NaN never does).
std::string outside(const char* name, const HostTensor& a, const HostTensor& b, double allowed) {
  std::string why;
  for_each_index(a, [&](const Index& i) {
    if (!why.empty()) return;
    const double x = value_at(a, i), y = value_at(b, i);
    if (x == y) return;
    if (!(std::fabs(x - y) <= allowed))
      why = std::string(name) + " differs by " + exact(std::fabs(x - y)) + " at " + where(name, i, a.rank()) +
            " (allowed " + exact(allowed) + ")";
  });
  return why;
}

// ---- differential ----

Outcome differential(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  for (const TensorCheck& t : r->tensors) {
    const std::uint64_t bad = t.errors.nan_mismatch + t.errors.inf_mismatch;
    if (bad > 0)
      return fail(t.name + ": " + std::to_string(bad) + " NaN/inf where the reference is finite (or the reverse)");
    if (t.finite_beyond_range > 0)
      return fail(t.name + ": " + std::to_string(t.finite_beyond_range) +
                  " finite values where the exact result overflows, beyond the rigorous bound");
    if (t.above_rigorous_bound > 0)
      return fail(t.name + ": " + std::to_string(t.above_rigorous_bound) + " elements above the rigorous bound (error up to " +
                  exact(t.bound_ratio) + " x the bound, largest bound " + exact(t.max_rigorous_bound) + ")");
    if (t.errors.count == 0 && t.beyond_range == 0) return fail(t.name + ": no element was compared");
  }
  return holds_with(r->in_domain ? "in domain" : "result beyond the dtype's range");
}

Outcome accuracy_regression(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  std::string skipped;
  for (const TensorCheck& t : r->tensors) {
    if (!t.regression_applies) {
      if (t.baseline_not_finite > 0) skipped = "the naive baseline is not finite";
      else if (skipped.empty()) skipped = "|LSE| beyond the rule's range";
      continue;
    }
    if (t.errors.above_bound > t.errors.nan_mismatch + t.errors.inf_mismatch)
      return fail(t.name + ": max error " + exact(t.errors.max_abs) + " above " + exact(t.tolerance) +
                  " (k x (naive baseline error " + exact(t.baseline_errors.max_abs) +
                  (t.d_error_share > 0 ? " + the given O's share of D " + exact(t.d_error_share) : std::string()) +
                  ") + rounding floor)");
  }
  if (!skipped.empty()) return holds_with("some tensors not judged: " + skipped);
  return holds_with(r->in_domain ? "in domain" : "result beyond the dtype's range");
}

// ---- metamorphic ----

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

// ---- determinism ----

// The runs a determinism property makes: a first and a second under one explored emulator schedule
// (kernels/emu/emulator.h), then one under each of two more, which vary block order, interleavings
// and the order of atomics where one fixed order could hide a dependence on them. Explored
// schedules run on one host thread, the same on every run, so the property's outcome is too: the
// schedules follow from the case (its schedule, else its seed) and a saved case replays them.
// They change nothing for implementations that are not emulated (there the runs are repeats).
constexpr int kSchedulesCompared = 3;

std::vector<std::uint64_t> compared_schedules(const Case& c) {
  std::vector<std::uint64_t> out;
  std::uint64_t state = c.schedule != 0 ? c.schedule : c.seed;
  if (c.schedule != 0) out.push_back(c.schedule);
  while (out.size() < kSchedulesCompared) {
    Rng rng(state ^ 0x5c4ed01e5c4ed01eull);
    state = rng.next();
    out.push_back(state != 0 ? state : 1);
  }
  return out;
}

Outputs run_under(std::uint64_t schedule, AttentionImpl& impl, const Problem& p, bool backward, const Inputs& in) {
  const emu::ScopedSchedule explored(schedule);
  return run_implementation(impl, p, backward, in);
}

std::string run_name(std::uint64_t first, std::uint64_t schedule, bool repeat) {
  return repeat ? "second run under schedule " + std::to_string(schedule) + ": "
                : "run under schedule " + std::to_string(schedule) + " (first under " + std::to_string(first) + "): ";
}

Outcome forward_determinism(AttentionImpl& impl, const Case& c) {
  const Inputs in = inputs_of(c);
  const std::vector<std::uint64_t> schedules = compared_schedules(c);
  const Outputs a = run_under(schedules[0], impl, c.problem, false, in);
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const Outputs b = run_under(schedules[i], impl, c.problem, false, in);
    const std::string run = run_name(schedules[0], schedules[i], i == 0);
    if (std::string w = bitwise_mismatch("O", b.o, a.o); !w.empty()) return fail(run + w);
    if (std::string w = bitwise_mismatch("LSE", b.lse, a.lse); !w.empty()) return fail(run + w);
  }
  return {};
}

Outcome backward_determinism(AttentionImpl& impl, const Case& c) {
  const Inputs in = inputs_of(c);
  const std::vector<std::uint64_t> schedules = compared_schedules(c);
  const Outputs a = run_under(schedules[0], impl, c.problem, true, in);
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    const Outputs b = run_under(schedules[i], impl, c.problem, true, in);
    const std::string run = run_name(schedules[0], schedules[i], i == 0);
    if (std::string w = bitwise_mismatch("dQ", b.dq, a.dq); !w.empty()) return fail(run + w);
    if (std::string w = bitwise_mismatch("dK", b.dk, a.dk); !w.empty()) return fail(run + w);
    if (std::string w = bitwise_mismatch("dV", b.dv, a.dv); !w.empty()) return fail(run + w);
  }
  return {};
}

// ---- empty rows ----

// A row that sees no key has O = 0, LSE = +inf and dQ = 0; a key no row sees has dK = dV = 0.
Outcome empty_rows(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const algo::WindowMask<std::int64_t> mask{p.mask_offset(), p.window_left, p.window_right};
  std::vector<char> row_sees(static_cast<std::size_t>(p.seqlen_q), 0), key_seen(static_cast<std::size_t>(p.seqlen_k), 0);
  for (std::int64_t i = 0; i < p.seqlen_q; ++i)
    for (std::int64_t j = 0; j < p.seqlen_k; ++j)
      if (mask.visible(i, j)) row_sees[static_cast<std::size_t>(i)] = key_seen[static_cast<std::size_t>(j)] = 1;
  const bool any_empty = std::find(row_sees.begin(), row_sees.end(), 0) != row_sees.end();
  const bool any_unseen = std::find(key_seen.begin(), key_seen.end(), 0) != key_seen.end();
  if (!any_empty && !any_unseen) return holds_with("vacuous (no empty row or unseen key)");
  const Outputs out = run_implementation(impl, p, c.backward, inputs_of(c));
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        if (row_sees[static_cast<std::size_t>(i)]) continue;
        if (out.lse.get(b, h, i) != std::numeric_limits<double>::infinity())
          return fail("LSE of empty row " + std::to_string(i) + " is " + std::to_string(out.lse.get(b, h, i)) + ", not +inf");
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          if (out.o.get(b, i, h, d) != 0) return fail("O of empty row " + std::to_string(i) + " is not 0");
          if (c.backward && out.dq.get(b, i, h, d) != 0) return fail("dQ of empty row " + std::to_string(i) + " is not 0");
        }
      }
  if (c.backward)
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads_kv; ++h)
        for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
          if (key_seen[static_cast<std::size_t>(j)]) continue;
          for (std::int64_t d = 0; d < p.head_dim; ++d)
            if (out.dk.get(b, j, h, d) != 0 || out.dv.get(b, j, h, d) != 0)
              return fail("dK/dV of key " + std::to_string(j) + ", which no row sees, is not 0");
        }
  return holds_with(any_empty ? "has empty rows" : "has unseen keys");
}

// ---- memory ----

std::uint32_t nan_bits(DType t) { return t == DType::fp16 ? 0x7E00u : t == DType::bf16 ? 0x7FC0u : 0x7FC00000u; }

// A [b, s, h, d] view into storage with two more rows per batch entry and 8 more elements per head
// row, the storage filled with `fill`; the view's elements are copied from `values` when given.
HostTensor padded_view(DType t, const Shape& shape, std::uint32_t fill, const HostTensor* values) {
  HostTensor storage(t, {shape[0], shape[1] + 2, shape[2], shape[3] + 8});
  storage.fill_storage_bits(fill);
  const std::int64_t row = shape[3] + 8;
  HostTensor view = storage.view(shape, {(shape[1] + 2) * shape[2] * row, shape[2] * row, row, 1}, 0);
  if (values != nullptr)
    for_each_index(view, [&](const Index& i) { view.set_bits(i[0], i[1], i[2], i[3], bits_at(*values, i)); });
  return view;
}

// The storage elements of a padded view outside the view that no longer hold `fill`.
std::int64_t touched_outside(const HostTensor& view, std::uint32_t fill) {
  const Shape& s = view.shape();
  const std::int64_t row = view.strides()[2], batch = view.strides()[0];
  std::int64_t n = 0;
  for (std::int64_t x = 0; x < view.storage_elements(); ++x) {
    const std::int64_t seq = (x % batch) / view.strides()[1];
    const bool inside = seq < s[1] && x % row < s[3];
    if (!inside && view.raw_bits(x) != fill) ++n;
  }
  return n;
}

// Outputs land exactly in strided views (the poisoned storage around them untouched), and NaN in
// K and V at keys no row sees, past the sequence ends and past head_dim never reaches an output:
// every output equals the run on clean contiguous inputs bitwise (dQ of a backward that is not
// reproducible: NaN/inf exactly where the clean run has them).
Outcome memory(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const Outputs clean = run_implementation(impl, p, c.backward, in);
  const algo::WindowMask<std::int64_t> mask{p.mask_offset(), p.window_left, p.window_right};
  std::vector<char> key_seen(static_cast<std::size_t>(p.seqlen_k), 0);
  for (std::int64_t j = 0; j < p.seqlen_k; ++j)
    for (std::int64_t i = 0; i < p.seqlen_q && !key_seen[static_cast<std::size_t>(j)]; ++i)
      key_seen[static_cast<std::size_t>(j)] = mask.visible(i, j) ? 1 : 0;
  const std::uint32_t nan = nan_bits(p.dtype), poison = output_poison_bits(p.dtype);
  HostTensor q = padded_view(p.dtype, p.q_shape(), nan, &in.q), dout = padded_view(p.dtype, p.q_shape(), nan, &in.dout);
  HostTensor k = padded_view(p.dtype, p.kv_shape(), nan, &in.k), v = padded_view(p.dtype, p.kv_shape(), nan, &in.v);
  std::int64_t unseen = 0;
  for_each_index(k, [&](const Index& i) {
    if (key_seen[static_cast<std::size_t>(i[1])]) return;
    k.set_bits(i[0], i[1], i[2], i[3], nan);
    v.set_bits(i[0], i[1], i[2], i[3], nan);
    ++unseen;
  });
  HostTensor o = padded_view(p.dtype, p.q_shape(), poison, nullptr);
  HostTensor lse(DType::fp32, p.lse_shape(), 3);
  impl.forward(p, ForwardArgs{q, k, v, o, lse});
  const std::pair<const char*, std::pair<const HostTensor*, const HostTensor*>> forward_outputs[] = {
      {"O", {&o, &clean.o}}, {"LSE", {&lse, &clean.lse}}};
  for (const auto& [name, pair] : forward_outputs)
    if (std::string w = bitwise_mismatch(name, *pair.first, *pair.second); !w.empty())
      return fail("with NaN around the inputs: " + w);
  if (const std::int64_t n = touched_outside(o, poison); n > 0)
    return fail("O: " + std::to_string(n) + " storage elements outside the view written");
  if (c.backward) {
    HostTensor dq = padded_view(p.dtype, p.q_shape(), poison, nullptr);
    HostTensor dk = padded_view(p.dtype, p.kv_shape(), poison, nullptr), dv = padded_view(p.dtype, p.kv_shape(), poison, nullptr);
    impl.backward(p, BackwardArgs{q, k, v, o, lse, dout, dq, dk, dv});
    for (const auto& [name, pair] : {std::pair{"dK", std::pair{&dk, &clean.dk}}, {"dV", {&dv, &clean.dv}}})
      if (std::string w = bitwise_mismatch(name, *pair.first, *pair.second); !w.empty())
        return fail("with NaN around the inputs: " + w);
    if (impl.bitwise_reproducible_backward()) {
      if (std::string w = bitwise_mismatch("dQ", dq, clean.dq); !w.empty()) return fail("with NaN around the inputs: " + w);
    } else {
      std::string why;
      for_each_index(dq, [&](const Index& i) {
        if (why.empty() && std::isfinite(value_at(dq, i)) != std::isfinite(value_at(clean.dq, i)))
          why = "dQ with NaN around the inputs is " + exact(value_at(dq, i)) + " at " + where("dQ", i, 4) + ", clean " +
                exact(value_at(clean.dq, i));
      });
      if (!why.empty()) return fail(why);
    }
    for (const auto& [name, view] : {std::pair{"dQ", &dq}, {"dK", &dk}, {"dV", &dv}})
      if (const std::int64_t n = touched_outside(*view, poison); n > 0)
        return fail(std::string(name) + ": " + std::to_string(n) + " storage elements outside the view written");
  }
  return holds_with(unseen > 0 ? "NaN at unseen keys" : "NaN past the ends only");
}

// ---- FA1 against FA2 ----

// The largest |a - b|; infinite when they disagree on NaN or on an infinity (equal infinities
// agree: LSE = +inf of an empty row).
double max_difference(const HostTensor& a, const HostTensor& b) {
  double worst = 0;
  for_each_index(a, [&](const Index& i) {
    const double x = value_at(a, i), y = value_at(b, i);
    if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
      if (!(x == y)) worst = std::numeric_limits<double>::infinity();
      return;
    }
    worst = std::max(worst, std::fabs(x - y));
  });
  return worst;
}

Outcome fa1_matches_fa2(AttentionImpl& impl, const Case& c) {
  const std::optional<CheckRecord> r = judged(impl, c);
  if (!r) return holds_with("inputs out of domain");
  return matches_fa2(impl, c, *r);
}

// ---- tile independence ----

// Sequences longer than the alternate forward's 32-key blocks and backward's 32-row blocks, so the
// shipped and the alternate shapes split every case differently.
constexpr std::int64_t kTileIndependenceMinSeqlen = 33;

// The implementation with its alternate tile shapes passes the differential verdict, and where
// both runs are finite they differ by at most B_shipped + B_alternate = 2B per element (both hold
// the same bound B of the same arithmetic model): a reference-free check that block sizes, warp
// counts and so summation orders and rescale points change results only within the bound.
// Infinities and NaN are the differential verdict's to judge.
Outcome tile_independence(AttentionImpl& impl, const Case& c) {
  const std::unique_ptr<AttentionImpl> alternate = impl.with_alternate_tiles();
  if (alternate == nullptr) return fail(impl.name() + " offers no alternate tile shapes");
  if (std::string why = alternate->unsupported_reason(c.problem, c.backward); !why.empty())
    return fail("the alternate tiles refuse a case the shipped ones take: " + why);
  const Outcome alone = differential(*alternate, c);
  if (!alone.holds) return fail(alternate->name() + ": " + alone.why);
  if (alone.tags == std::vector<std::string>{"inputs out of domain"}) return alone;  // nothing judged
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const Outputs a = run_implementation(impl, p, c.backward, in);
  const Outputs b = run_implementation(*alternate, p, c.backward, in);
  const bounds::ImplementationBounds bound = bounds::implementation_bounds(p, in, impl.arithmetic_model(), c.backward);
  const std::tuple<const char*, const HostTensor*, const HostTensor*, const std::vector<double>*> tensors[] = {
      {"O", &a.o, &b.o, &bound.o}, {"LSE", &a.lse, &b.lse, &bound.lse}, {"dQ", &a.dq, &b.dq, &bound.dq},
      {"dK", &a.dk, &b.dk, &bound.dk}, {"dV", &a.dv, &b.dv, &bound.dv}};
  double worst_ratio = 0;
  bool bitwise = true;
  for (const auto& [name, x, y, limit] : tensors) {
    if (limit->empty()) continue;  // no backward
    std::string why;
    std::size_t at = 0;
    for_each_index(*x, [&](const Index& i) {
      const double u = value_at(*x, i), v = value_at(*y, i), allowed = 2 * (*limit)[at++];
      bitwise = bitwise && bits_at(*x, i) == bits_at(*y, i);
      if (!why.empty() || !std::isfinite(u) || !std::isfinite(v) || u == v) return;
      const double d = std::fabs(u - v);
      if (!(d <= allowed))
        why = std::string(name) + ": shipped " + exact(u) + " and alternate tiles " + exact(v) + " at " +
              where(name, i, x->rank()) + " differ by " + exact(d) + ", more than 2 x the bound " + exact(allowed / 2);
      else if (allowed > 0)
        worst_ratio = std::max(worst_ratio, d / allowed);
    });
    if (!why.empty()) return fail(why);
  }
  if (bitwise) return holds_with("bitwise equal");
  return holds_with(worst_ratio > 0.25 ? "differ by > 1/4 of 2B" : "differ by <= 1/4 of 2B");
}

bool always(const AttentionImpl&) { return true; }
bool has_alternate_tiles(const AttentionImpl& impl) { return impl.with_alternate_tiles() != nullptr; }
bool is_fa1(const AttentionImpl& impl) { return impl.name() == "fa1" && find_implementation("fa2") != nullptr; }
bool reproducible(const AttentionImpl& impl) { return impl.bitwise_reproducible_backward(); }

}  // namespace

Outcome matches_fa2(AttentionImpl& impl, const Case& c, const CheckRecord& record) {
  AttentionImpl* fa2 = find_implementation("fa2");
  if (fa2 == nullptr || !fa2->unsupported_reason(c.problem, c.backward).empty()) return holds_with("not judged (no fa2)");
  const Inputs in = inputs_of(c);
  const Outputs a = run_implementation(impl, c.problem, c.backward, in);
  const Outputs b = run_implementation(*fa2, c.problem, c.backward, in);
  const std::pair<const HostTensor*, const HostTensor*> pairs[] = {
      {&a.o, &b.o}, {&a.lse, &b.lse}, {&a.dq, &b.dq}, {&a.dk, &b.dk}, {&a.dv, &b.dv}};
  for (std::size_t t = 0; t < record.tensors.size(); ++t) {
    const TensorCheck& check = record.tensors[t];
    const double difference = max_difference(*pairs[t].first, *pairs[t].second);
    if (!(difference <= kFa1Fa2AgreementFloors * check.errors.rel_floor))
      return fail(check.name + ": " + impl.name() + " and fa2 differ by " + exact(difference) + " = " +
                  exact(difference / check.errors.rel_floor) + " rounding floors (allowed " +
                  exact(kFa1Fa2AgreementFloors) + ")");
  }
  return {};
}

const std::vector<Property>& all_properties() {
  static const std::vector<Property> list = {
      {"differential", "every element within its rigorous bound, no NaN/inf where the reference is finite, no finite value where it overflows", MaskChoice::any,
       true, differential, always},
      {"accuracy-regression", "error <= k x the naive baseline's (dQ, dK of a flash backward: + the given O's share of D) + rounding floor (k = 2 forward, 3 backward)",
       MaskChoice::any, true, accuracy_regression, always},
      {"key-value-permutation", "permuting keys and values jointly leaves O and LSE unchanged (no mask)",
       MaskChoice::none, false, key_value_permutation, always},
      {"query-permutation", "permuting query rows permutes O and LSE, bitwise (no mask)", MaskChoice::none, false,
       query_permutation, always},
      {"value-scaling", "O(Q, K, +-2^e V) = +-2^e O (fp16: bitwise where normal); LSE unchanged", MaskChoice::any, false,
       value_scaling, always},
      {"prefix-independence", "K/V a row cannot see do not change its O and LSE, bitwise", MaskChoice::masked, false,
       prefix_independence, always},
      {"gqa-equals-mha", "GQA equals MHA with K/V heads repeated: O, LSE (and reproducible dQ) bitwise",
       MaskChoice::any, true, gqa_equals_mha, always},
      {"batch-independence", "each batch entry equals its run alone, bitwise", MaskChoice::any, true,
       batch_independence, always},
      {"forward-determinism", "the forward is bitwise reproducible under every schedule", MaskChoice::any, false, forward_determinism,
       always},
      // At least three key blocks of 128 (the largest shipped block_n): fewer contributions to a dQ
      // element commute exactly (0 + a + b = 0 + b + a), so no order of additions could show.
      {"backward-determinism", "the backward is bitwise reproducible under every schedule (implementations that promise it)",
       MaskChoice::any, true, backward_determinism, reproducible, 0, 1, 257},
      {"empty-rows", "rows seeing no key: O = 0, LSE = +inf, dQ = 0; keys no row sees: dK = dV = 0",
       MaskChoice::masked, true, empty_rows, always},
      {"memory", "outputs exactly in strided views; NaN at unseen keys and past the ends never reaches them",
       MaskChoice::local, true, memory, always},
      {"fa1-matches-fa2", "FA1 and FA2 agree within two rounding floors on the same inputs", MaskChoice::any, true,
       fa1_matches_fa2, is_fa1},
      {"tile-independence",
       "with the alternate tile shapes: within the rigorous bound, and within 2x the bound of the shipped shapes",
       MaskChoice::any, true, tile_independence, has_alternate_tiles, 0, kTileIndependenceMinSeqlen},
      // MPFR forwards at 256 bits: small cases only.
      {"gradient-finite-differences",
       "<dQ|dK|dV, u> within tolerance of central differences of the reference's MPFR forward loss", MaskChoice::any,
       true, gradient_finite_differences, always, std::int64_t{1} << 15},
  };
  return list;
}

const Property* find_property(const std::string& name) {
  for (const Property& p : all_properties())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace flashproof::properties
