// The soft cap and ALiBi in the FA2 kernels (kernels/algo/score_mod.h, docs/fa2.md "Soft cap and
// ALiBi"), emulated (label `emulated`):
// 1. ALiBi slopes all 0 give, bit for bit, the dense kernels' outputs (the bias -0 adds nothing),
//    forward and backward.
// 2. The soft cap and ALiBi, forward (O, LSE) and backward (dQ, dK, dV), within a tolerance derived
//    below from the kernels' arithmetic, of a host double-precision computation of the definition;
//    and each deliberately broken variant (FlashScoreModFlaw: the backward without 1 - t^2, a
//    top-left ALiBi distance, the bias with the wrong sign) breaks that tolerance.
// 3. A packed batch with ALiBi and the cap: each sequence bit for bit its dense run (the distance
//    is measured in each sequence's own coordinates).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/arch/convert.h"
#include "kernels/fa1/api.h"
#include "kernels/fa2/api.h"
#include "kernels/flash/api.h"

namespace flashproof::kernels {
namespace {

using Bits = std::vector<std::uint16_t>;

arch::MmaTag tag_of(FlashDtype d) { return d == FlashDtype::bf16 ? arch::MmaTag::bf16 : arch::MmaTag::fp16; }

Bits inputs(std::size_t n, std::uint64_t seed, FlashDtype dtype, float range) {
  Bits v(n);
  std::uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const float f = (static_cast<float>((x >> 40) % 20001) / 10000.0f - 1.0f) * range;
    e = arch::float_to_bits16(tag_of(dtype), f);
  }
  return v;
}

FlashTensor tensor(Bits& data, int seqlen, int heads, int head_dim) {
  return {data.data(), {1, seqlen, heads, head_dim}, {std::int64_t{seqlen} * heads * head_dim, heads * head_dim, head_dim, 1}};
}

struct Case {
  int seqlen_q = 40, seqlen_k = 70, heads_q = 2, heads_kv = 1, d = 64;
  FlashDtype dtype = FlashDtype::fp16;
  int window_left = -1, window_right = -1;
  std::optional<float> softcap;
  std::vector<float> slopes;
  float range = 2.0f;  // inputs uniform in [-range, range]
  std::string name() const {
    std::ostringstream s;
    s << "d" << d << (dtype == FlashDtype::bf16 ? " bf16" : " fp16") << " q" << seqlen_q << " k" << seqlen_k
      << " window " << window_left << ',' << window_right << " cap " << (softcap ? *softcap : 0.0f) << " slopes "
      << slopes.size();
    return s.str();
  }
};

struct Outputs {
  Bits o, dq, dk, dv;
  std::vector<float> lse;
};

struct Inputs {
  Bits q, k, v, dout;
  Inputs(const Case& c)
      : q(inputs(std::size_t(c.seqlen_q) * c.heads_q * c.d, 11, c.dtype, c.range)),
        k(inputs(std::size_t(c.seqlen_k) * c.heads_kv * c.d, 12, c.dtype, c.range)),
        v(inputs(std::size_t(c.seqlen_k) * c.heads_kv * c.d, 13, c.dtype, 1.0f)),
        dout(inputs(q.size(), 14, c.dtype, 1.0f)) {}
};

FlashOptions options_of(const Case& c, FlashScoreModFlaw flaw) {
  FlashOptions o;
  o.window_left = c.window_left;
  o.window_right = c.window_right;
  o.deterministic = true;
  o.softcap = c.softcap;
  o.alibi_slopes = c.slopes;
  o.score_mod_flaw = flaw;
  return o;
}

Outputs run(const Case& c, Inputs& in, FlashScoreModFlaw flaw = FlashScoreModFlaw::none) {
  Outputs out;
  out.o.resize(in.q.size()), out.dq.resize(in.q.size()), out.dk.resize(in.k.size()), out.dv.resize(in.k.size());
  out.lse.resize(std::size_t(c.seqlen_q) * c.heads_q);
  const FlashOptions options = options_of(c, flaw);
  FlashForwardTensors f{tensor(in.q, c.seqlen_q, c.heads_q, c.d), tensor(in.k, c.seqlen_k, c.heads_kv, c.d),
                        tensor(in.v, c.seqlen_k, c.heads_kv, c.d), tensor(out.o, c.seqlen_q, c.heads_q, c.d),
                        out.lse.data()};
  fa2_forward(FlashTarget::emulated, c.dtype, f, options);
  FlashBackwardTensors b{f.q, f.k, f.v, f.o, tensor(in.dout, c.seqlen_q, c.heads_q, c.d),
                         tensor(out.dq, c.seqlen_q, c.heads_q, c.d), tensor(out.dk, c.seqlen_k, c.heads_kv, c.d),
                         tensor(out.dv, c.seqlen_k, c.heads_kv, c.d), out.lse.data()};
  fa2_backward(FlashTarget::emulated, c.dtype, b, options);
  return out;
}

bool same_bits(const Outputs& a, const Outputs& b) {
  return a.o == b.o && a.dq == b.dq && a.dk == b.dk && a.dv == b.dv &&
         std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
}

// ---------------- 1. slopes all 0: the dense run, bit for bit ----------------

TEST(ScoreMod, ZeroSlopesAreTheDenseRunBitForBit) {
  for (FlashDtype dtype : {FlashDtype::fp16, FlashDtype::bf16})
    for (int d : algo::kFa2HeadDimBuckets) {
      if (!fa2_score_mod_built(d)) continue;
      for (int window_right : {-1, 0}) {
        Case c;
        c.d = d, c.dtype = dtype, c.window_right = window_right, c.seqlen_q = 77, c.seqlen_k = 133;
        Inputs in(c);
        const Outputs dense = run(c, in);
        c.slopes.assign(c.heads_q, 0.0f);
        const Outputs zero = run(c, in);
        EXPECT_TRUE(same_bits(dense, zero)) << c.name();
      }
    }
}

// ---------------- 2. against the definition in double ----------------
//
// The reference: exact real arithmetic (double) on the rounded inputs, natural units:
//   y = scale q.k, z = c tanh(y / c) (capped) - slope_h |i + seqlen_k - seqlen_q - j|, P = softmax
//   over the kept keys, O = P V, LSE = log sum exp z; dP = dO V^T, D = rowsum(P * dP),
//   dS = P (dP - D) (1 - tanh^2(y / c)), dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO.
// The tolerance: a first-order bound of the kernels' errors, element by element, from the same
// quantities (u = 2^-24 fp32, u_h = 2^-11 fp16 / 2^-8 bf16, n the keys of the row, d the head dim,
// gamma_d = d u / (1 - d u)):
//  - logit, log2 units: the fp32 dot product gamma_d scale |q|.|k|, the constants (scale_log2,
//    cap_log2, inv_cap_log2, slope_log2) and each rounding of the cap and bias (each <= 2u
//    relative, tanhf 2 ulps <= 4u|t|, the cap's slope <= 1), x - m (u |x - m|):
//      dx = log2 e (scale gamma_d |q|.|k| + 16 u (|y| + |c t| + |bias| + |z|) + 2 u |z - max z|)
//  - a weight: e_k = ln2 dx_k + 2^-21 (exp2); O = fl_h(sum_k fl_h(w_k) V_k / l):
//      |dO_ij| <= u_h |O_ij| + sum_k P_k |V_kj| (e_k + ebar + u_h + (n + 4) u) + n 2^-25 max|V|
//    (ebar = sum_k P_k e_k, l's error; 2^-25: P in fp16's subnormals)
//  - LSE: |dLSE| <= ebar + (n + 8) u (|LSE| + 1).
//  - backward: P recomputed from the stored LSE, e_k + |dLSE| + 2u(|LSE| + |z - LSE|) relative;
//    dP within gamma_d |dO|.|V|; D from the stored O: sum_j |dO_ij| (|dO_ij bound| + gamma_d |O_ij|);
//    dS = fl(P fl(dP - D)); the cap's factor 1 - t^2 within 2|t| dt + 2u, dt <= (scale gamma_d
//    |q|.|k| + 2u|y|) / c + 8u; dS' rounded to the input type (u_h, and 2^-25 absolute); dQ, dK
//    sums of n fp32 products ((n + 2) u), scaled and rounded (u_h); dV likewise from P and dO.
// Each bound is taken 1.25 times (second-order terms, far below that at these sizes). A broken
// variant moves the results by the size of the logits' change (a bias of slope * seqlen_k -
// seqlen_q, a sign, a factor t^2 of dS), orders of magnitude above these bounds.

double value(const Bits& v, std::size_t i, FlashDtype dtype) { return arch::bits16_to_float(tag_of(dtype), v[i]); }

struct Verdict {
  double worst = 0;  // max |error| / tolerance
  std::string where;
  void see(double err, double tol, const std::string& what) {
    const double r = std::isnan(err) ? 1e300 : err / tol;
    if (r > worst) worst = r, where = what;
  }
};

Verdict compare_with_definition(const Case& c, const Inputs& in, const Outputs& out) {
  const int n_q = c.seqlen_q, n_k = c.seqlen_k, d = c.d, group = c.heads_q / c.heads_kv;
  const double u = std::ldexp(1.0, -24), uh = std::ldexp(1.0, c.dtype == FlashDtype::bf16 ? -8 : -11);
  const double sub = c.dtype == FlashDtype::bf16 ? 0 : std::ldexp(1.0, -25);
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  const double gamma_d = d * u / (1 - d * u);
  const double scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const int offset = n_k - n_q;
  const auto kept = [&](int i, int j) {
    return (c.window_left < 0 || j >= i + offset - c.window_left) && (c.window_right < 0 || j <= i + offset + c.window_right);
  };
  const auto at_q = [&](int i, int h, int x) { return (std::size_t(i) * c.heads_q + h) * d + x; };
  const auto at_k = [&](int j, int h, int x) { return (std::size_t(j) * c.heads_kv + h) * d + x; };
  double max_v = 0;
  for (std::size_t x = 0; x < in.v.size(); ++x) max_v = std::max(max_v, std::abs(value(in.v, x, c.dtype)));
  Verdict verdict;
  std::vector<double> dq_err(std::size_t(n_q) * c.heads_q * d), dq_ref(dq_err.size());
  std::vector<double> dk_err(std::size_t(n_k) * c.heads_kv * d), dk_ref(dk_err.size()), dv_err(dk_err.size()),
      dv_ref(dk_err.size());
  for (int h = 0; h < c.heads_q; ++h) {
    const int hk = h / group;
    const double slope = c.slopes.empty() ? 0.0 : c.slopes[h];
    for (int i = 0; i < n_q; ++i) {
      std::vector<double> z(n_k), t(n_k, 0.0), y(n_k), dx(n_k), a(n_k), p(n_k, 0.0), e(n_k, 0.0), dp(n_k), b(n_k);
      double zmax = -INFINITY;
      for (int j = 0; j < n_k; ++j) {
        double s = 0, abs_s = 0, sd = 0, abs_sd = 0;
        for (int x = 0; x < d; ++x) {
          const double qx = value(in.q, at_q(i, h, x), c.dtype), kx = value(in.k, at_k(j, hk, x), c.dtype);
          const double gx = value(in.dout, at_q(i, h, x), c.dtype), vx = value(in.v, at_k(j, hk, x), c.dtype);
          s += qx * kx, abs_s += std::abs(qx * kx), sd += gx * vx, abs_sd += std::abs(gx * vx);
        }
        y[j] = scale * s, a[j] = abs_s, dp[j] = sd, b[j] = abs_sd;
        double capped = y[j];
        if (c.softcap) t[j] = std::tanh(y[j] / *c.softcap), capped = *c.softcap * t[j];
        const double bias = -slope * std::abs(i + offset - j);
        z[j] = capped + bias;
        dx[j] = scale * gamma_d * a[j] + 16 * u * (std::abs(y[j]) + std::abs(capped) + std::abs(bias) + std::abs(z[j]));
        if (kept(i, j)) zmax = std::max(zmax, z[j]);
      }
      double l = 0;
      for (int j = 0; j < n_k; ++j)
        if (kept(i, j)) l += std::exp(z[j] - zmax);
      const double lse = zmax + std::log(l);
      double ebar = 0, n = 0, dsum = 0;
      for (int j = 0; j < n_k; ++j) {
        if (!kept(i, j)) continue;
        p[j] = std::exp(z[j] - lse), n += 1;
        e[j] = ln2 * log2e * (dx[j] + 2 * u * std::abs(z[j] - zmax)) + std::ldexp(1.0, -21);
        ebar += p[j] * e[j];
        dsum += p[j] * dp[j];
      }
      const double lse_tol = ebar + (n + 8) * u * (std::abs(lse) + 1);
      verdict.see(std::abs(out.lse[std::size_t(h) * n_q + i] - lse), 1.25 * lse_tol, "LSE row " + std::to_string(i));
      // O and D's error from the stored O.
      double d_err = 0;
      for (int x = 0; x < d; ++x) {
        double o = 0, tol = 0;
        for (int j = 0; j < n_k; ++j) {
          if (!kept(i, j)) continue;
          const double vx = value(in.v, at_k(j, hk, x), c.dtype);
          o += p[j] * vx, tol += p[j] * std::abs(vx) * (e[j] + ebar + uh + (n + 4) * u);
        }
        tol += uh * std::abs(o) + n * sub * max_v;
        const double got = value(out.o, at_q(i, h, x), c.dtype);
        verdict.see(std::abs(got - o), 1.25 * tol, "O row " + std::to_string(i));
        const double gx = std::abs(value(in.dout, at_q(i, h, x), c.dtype));
        d_err += gx * (1.25 * tol + gamma_d * std::abs(got));
      }
      // dS' per key, its reference and bound.
      for (int j = 0; j < n_k; ++j) {
        if (!kept(i, j)) continue;
        const double g = dp[j] - dsum;
        const double eb = e[j] + 1.25 * lse_tol + 2 * u * (std::abs(lse) + std::abs(z[j] - lse));
        double ds = p[j] * g;
        double ds_err = p[j] * std::abs(g) * eb + p[j] * (gamma_d * b[j] + d_err + u * std::abs(g)) + u * std::abs(ds);
        if (c.softcap) {
          const double tau = 1 - t[j] * t[j];
          const double dt = (scale * gamma_d * a[j] + 2 * u * std::abs(y[j])) / *c.softcap + 8 * u;
          ds_err = ds_err * tau + std::abs(ds) * (2 * std::abs(t[j]) * dt + 2 * u);
          ds *= tau;
        }
        ds_err += u * std::abs(ds) + uh * std::abs(ds) + sub;
        const double p_err = p[j] * (eb + uh) + sub;
        for (int x = 0; x < d; ++x) {
          const double kx = value(in.k, at_k(j, hk, x), c.dtype), qx = value(in.q, at_q(i, h, x), c.dtype);
          const double gx = value(in.dout, at_q(i, h, x), c.dtype);
          dq_ref[at_q(i, h, x)] += scale * ds * kx;
          dq_err[at_q(i, h, x)] += scale * (ds_err + (n + 2) * u * std::abs(ds)) * std::abs(kx);
          dk_ref[at_k(j, hk, x)] += scale * ds * qx;
          dk_err[at_k(j, hk, x)] += scale * (ds_err + (n_q * group + 2) * u * std::abs(ds)) * std::abs(qx);
          dv_ref[at_k(j, hk, x)] += p[j] * gx;
          dv_err[at_k(j, hk, x)] += (p_err + (n_q * group + 2) * u * p[j]) * std::abs(gx);
        }
      }
    }
  }
  const auto judge = [&](const char* what, const Bits& got, const std::vector<double>& ref, const std::vector<double>& err) {
    for (std::size_t x = 0; x < ref.size(); ++x)
      verdict.see(std::abs(value(got, x, c.dtype) - ref[x]), 1.25 * (err[x] + uh * std::abs(ref[x])) + 1e-30,
                  std::string(what) + " element " + std::to_string(x));
  };
  judge("dQ", out.dq, dq_ref, dq_err);
  judge("dK", out.dk, dk_ref, dk_err);
  judge("dV", out.dv, dv_ref, dv_err);
  return verdict;
}

std::vector<Case> definition_cases() {
  std::vector<Case> cases;
  for (int d : {64, 128}) {
    if (!fa2_score_mod_built(d)) continue;
    for (FlashDtype dtype : {FlashDtype::fp16, FlashDtype::bf16}) {
      Case cap;  // logits of a few units against a cap of 2: t far from 0 and from 1
      cap.d = d, cap.dtype = dtype, cap.softcap = 2.0f, cap.range = 1.5f;
      cases.push_back(cap);
      Case alibi;  // BLOOM's slopes for 2 heads (2^-4, 2^-8), len_q != len_k, causal
      alibi.d = d, alibi.dtype = dtype, alibi.slopes = {0.25f, 0.0625f}, alibi.window_right = 0;
      cases.push_back(alibi);
      Case both = cap;
      both.slopes = {0.3f, 0.05f}, both.window_left = 30, both.window_right = 5;
      cases.push_back(both);
    }
  }
  return cases;
}

TEST(ScoreMod, WithinTheDerivedBoundOfTheDefinition) {
  for (const Case& c : definition_cases()) {
    Inputs in(c);
    const Verdict v = compare_with_definition(c, in, run(c, in));
    EXPECT_LE(v.worst, 1.0) << c.name() << ": worst " << v.worst << " of the bound at " << v.where;
    std::printf("%s: worst %.3g of the bound (%s)\n", c.name().c_str(), v.worst, v.where.c_str());
  }
}

// Each broken variant breaks the bound (so the bound is not too wide to see it), by at least 2x (the
// real kernels stay below 1x; measured: the missing derivative at bf16 is the closest, 4.6x to 6.8x
// of the bound, the ALiBi flaws and fp16 far above).
TEST(ScoreMod, EachBrokenVariantBreaksTheBound) {
  for (const Case& base : definition_cases()) {
    std::vector<FlashScoreModFlaw> flaws;
    if (base.softcap) flaws.push_back(FlashScoreModFlaw::missing_softcap_derivative);
    if (!base.slopes.empty()) flaws.insert(flaws.end(), {FlashScoreModFlaw::alibi_top_left, FlashScoreModFlaw::alibi_wrong_sign});
    for (FlashScoreModFlaw flaw : flaws) {
      Inputs in(base);
      const Verdict v = compare_with_definition(base, in, run(base, in, flaw));
      EXPECT_GT(v.worst, 2.0) << base.name() << " flaw " << static_cast<int>(flaw) << ": only " << v.worst
                               << " of the bound (at " << v.where << ")";
    }
  }
}

// ---------------- 3. packed + ALiBi: each sequence its dense run ----------------

TEST(ScoreMod, PackedSequencesAreTheirDenseRunsBitForBit) {
  const std::vector<std::int32_t> cu_q{0, 5, 5, 41, 58}, cu_k{0, 9, 30, 47, 47 + 70};
  for (FlashDtype dtype : {FlashDtype::fp16, FlashDtype::bf16})
    for (int window_right : {-1, 0}) {
      Case whole;
      whole.seqlen_q = cu_q.back(), whole.seqlen_k = cu_k.back(), whole.dtype = dtype, whole.window_right = window_right;
      whole.softcap = 5.0f, whole.slopes = {0.5f, 0.125f};
      Inputs in(whole);
      Outputs packed;
      {
        Case& c = whole;
        packed.o.assign(in.q.size(), 0), packed.dq.assign(in.q.size(), 0), packed.dk.assign(in.k.size(), 0);
        packed.dv.assign(in.k.size(), 0), packed.lse.assign(std::size_t(c.seqlen_q) * c.heads_q, 0);
        FlashOptions options = options_of(c, FlashScoreModFlaw::none);
        options.cu_seqlens_q = cu_q, options.cu_seqlens_k = cu_k;
        FlashForwardTensors f{tensor(in.q, c.seqlen_q, c.heads_q, c.d), tensor(in.k, c.seqlen_k, c.heads_kv, c.d),
                              tensor(in.v, c.seqlen_k, c.heads_kv, c.d), tensor(packed.o, c.seqlen_q, c.heads_q, c.d),
                              packed.lse.data()};
        fa2_forward(FlashTarget::emulated, c.dtype, f, options);
        FlashBackwardTensors b{f.q, f.k, f.v, f.o, tensor(in.dout, c.seqlen_q, c.heads_q, c.d),
                               tensor(packed.dq, c.seqlen_q, c.heads_q, c.d), tensor(packed.dk, c.seqlen_k, c.heads_kv, c.d),
                               tensor(packed.dv, c.seqlen_k, c.heads_kv, c.d), packed.lse.data()};
        fa2_backward(FlashTarget::emulated, c.dtype, b, options);
      }
      for (std::size_t s = 0; s + 1 < cu_q.size(); ++s) {
        Case one = whole;
        one.seqlen_q = cu_q[s + 1] - cu_q[s], one.seqlen_k = cu_k[s + 1] - cu_k[s];
        if (one.seqlen_q == 0 || one.seqlen_k == 0) continue;
        const std::size_t qrow = std::size_t(whole.heads_q) * whole.d, krow = std::size_t(whole.heads_kv) * whole.d;
        Inputs alone(one);
        const auto slice = [](const Bits& v, std::size_t begin, std::size_t count) {
          return Bits(v.begin() + begin, v.begin() + begin + count);
        };
        alone.q = slice(in.q, cu_q[s] * qrow, one.seqlen_q * qrow), alone.dout = slice(in.dout, cu_q[s] * qrow, one.seqlen_q * qrow);
        alone.k = slice(in.k, cu_k[s] * krow, one.seqlen_k * krow), alone.v = slice(in.v, cu_k[s] * krow, one.seqlen_k * krow);
        const Outputs dense = run(one, alone);
        const std::string what = whole.name() + " sequence " + std::to_string(s);
        EXPECT_EQ(dense.o, slice(packed.o, cu_q[s] * qrow, one.seqlen_q * qrow)) << what;
        EXPECT_EQ(dense.dq, slice(packed.dq, cu_q[s] * qrow, one.seqlen_q * qrow)) << what;
        EXPECT_EQ(dense.dk, slice(packed.dk, cu_k[s] * krow, one.seqlen_k * krow)) << what;
        EXPECT_EQ(dense.dv, slice(packed.dv, cu_k[s] * krow, one.seqlen_k * krow)) << what;
        for (int h = 0; h < whole.heads_q; ++h)
          EXPECT_EQ(0, std::memcmp(dense.lse.data() + std::size_t(h) * one.seqlen_q,
                                   packed.lse.data() + std::size_t(h) * whole.seqlen_q + cu_q[s],
                                   one.seqlen_q * sizeof(float)))
              << what << " head " << h;
      }
    }
}

// The call's checks: one line each.
TEST(ScoreMod, BadArgumentsAreOneLineErrors) {
  Case c;
  Inputs in(c);
  Outputs out;
  out.o.resize(in.q.size()), out.lse.resize(std::size_t(c.seqlen_q) * c.heads_q);
  FlashForwardTensors f{tensor(in.q, c.seqlen_q, c.heads_q, c.d), tensor(in.k, c.seqlen_k, c.heads_kv, c.d),
                        tensor(in.v, c.seqlen_k, c.heads_kv, c.d), tensor(out.o, c.seqlen_q, c.heads_q, c.d),
                        out.lse.data()};
  const auto error = [&](const FlashOptions& o) { return fa2_forward_error(FlashTarget::emulated, f, o); };
  FlashOptions o;
  o.softcap = 0.0f;
  EXPECT_EQ(error(o), "fa2: softcap must be finite and > 0 (got 0.000000)");
  o.softcap = INFINITY;
  EXPECT_EQ(error(o), "fa2: softcap must be finite and > 0 (got inf)");
  o.softcap = 1e-45f;
  EXPECT_NE(error(o).find("out of the kernels' range"), std::string::npos) << error(o);
  o.softcap.reset();
  const std::vector<float> one{0.5f}, nan{0.5f, NAN};
  o.alibi_slopes = one;
  EXPECT_EQ(error(o), "fa2: alibi_slopes must hold one slope per query head (got 1 for heads_q 2)");
  o.alibi_slopes = nan;
  EXPECT_EQ(error(o), "fa2: alibi_slopes must be finite (slope 1 is not)");
  const std::vector<float> two{0.5f, 0.25f};
  o.alibi_slopes = two;
  EXPECT_EQ(error(o), "");
  if (fa1_bucket_built(64)) {
    EXPECT_EQ(fa1_forward_error(FlashTarget::emulated, f, o), "fa1: the soft cap and ALiBi are not supported");
  }
  o.tiles = algo::TileSet::alternate;
  EXPECT_EQ(error(o), "fa2: the soft cap and ALiBi run with the shipped tiles only");
  o.tiles = algo::TileSet::shipped;
  // A bucket without the score-mod kernels is refused, never run densely.
  for (int d : algo::kFa2HeadDimBuckets) {
    if (!fa2_bucket_built(d) || fa2_score_mod_built(d)) continue;
    Case other;
    other.d = d;
    Inputs oin(other);
    Bits oo(oin.q.size());
    FlashForwardTensors of{tensor(oin.q, other.seqlen_q, other.heads_q, d), tensor(oin.k, other.seqlen_k, other.heads_kv, d),
                           tensor(oin.v, other.seqlen_k, other.heads_kv, d), tensor(oo, other.seqlen_q, other.heads_q, d),
                           out.lse.data()};
    EXPECT_EQ(fa2_forward_error(FlashTarget::emulated, of, o),
              "fa2: the soft cap and ALiBi are not built for head_dim bucket " + std::to_string(d));
    EXPECT_THROW(fa2_forward(FlashTarget::emulated, FlashDtype::fp16, of, o), std::invalid_argument);
  }
}

}  // namespace
}  // namespace flashproof::kernels
