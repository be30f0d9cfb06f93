#include "tests/reference/reference_checks.h"

#include <cmath>
#include <sstream>

#include "core/generators.h"
#include "core/rng.h"
#include "reference/finite_difference.h"
#include "reference/instantiations.h"

namespace flashproof::reference::checks {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Tensor [b, s, h, d] in fp32 from values listed in row-major order.
HostTensor tensor(Shape shape, const std::vector<double>& values) {
  HostTensor t(DType::fp32, shape);
  std::size_t n = 0;
  for (std::int64_t a = 0; a < shape[0]; ++a)
    for (std::int64_t b = 0; b < shape[1]; ++b)
      for (std::int64_t c = 0; c < shape[2]; ++c)
        for (std::int64_t d = 0; d < shape[3]; ++d) t.set(a, b, c, d, values.at(n++));
  return t;
}

Problem fp32_problem(std::int64_t sq, std::int64_t sk, std::int64_t d, float scale) {
  Problem p;
  p.dtype = DType::fp32;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.head_dim = d;
  p.scale = scale;
  return p;
}

// Compares element `x` of a certified tensor with a value computed by hand in double (a few
// correctly rounded operations, so within 1e-14 relative of the exact value).
void expect(Failures& f, const std::string& what, const CertifiedTensor& t, std::size_t x,
            double expected) {
  const double got = t.value.at(x), bound = t.bound.at(x);
  const bool ok = std::isinf(expected)
                      ? got == expected
                      : std::fabs(got - expected) <= bound + 1e-14 * std::max(1.0, std::fabs(expected));
  if (!ok) {
    std::ostringstream s;
    s.precision(17);
    s << what << "[" << x << "]: reference " << got << " (bound " << bound << "), by hand "
      << expected;
    f.push_back(s.str());
  }
}

struct Case {
  Problem p;
  HostTensor q, k, v, dout;
  ForwardResult fwd;
  BackwardResult bwd;
  Case(const Problem& problem, const std::vector<double>& qv, const std::vector<double>& kv,
       const std::vector<double>& vv, const std::vector<double>& dov, Backend backend,
       Mutation mutation)
      : p(problem),
        q(tensor(p.q_shape(), qv)),
        k(tensor(p.kv_shape(), kv)),
        v(tensor(p.kv_shape(), vv)),
        dout(tensor(p.q_shape(), dov)) {
    Options opt;
    opt.backend = backend;
    opt.mutation = mutation;
    fwd = forward(p, q, k, v, opt);
    bwd = backward(p, q, k, v, dout, opt);
  }
};

}  // namespace

Failures hand_cases(Backend backend, Mutation mutation) {
  Failures f;
  const double s = 0.5;  // an exact scale that differs from its square
  {  // 1x1: O = v, LSE = s q k, P = 1 so dQ = dK = 0 and dV = dO.
    Case c(fp32_problem(1, 1, 1, s), {3}, {2}, {5}, {7}, backend, mutation);
    expect(f, "1x1 O", c.fwd.o, 0, 5);
    expect(f, "1x1 LSE", c.fwd.lse, 0, 3);
    expect(f, "1x1 dQ", c.bwd.dq, 0, 0);
    expect(f, "1x1 dK", c.bwd.dk, 0, 0);
    expect(f, "1x1 dV", c.bwd.dv, 0, 7);
  }
  {  // seqlen_k = 1: every row's P is exactly 1.
    Case c(fp32_problem(3, 1, 2, s), {1, 2, -3, 4, 0.5, -1}, {2, -1}, {5, -6}, {1, 2, 3, 4, 5, 6},
           backend, mutation);
    const double qk[3] = {1 * 2 + 2 * -1, -3 * 2 + 4 * -1, 0.5 * 2 + -1 * -1};
    for (int i = 0; i < 3; ++i) {
      expect(f, "sk=1 O", c.fwd.o, 2 * i, 5);
      expect(f, "sk=1 O", c.fwd.o, 2 * i + 1, -6);
      expect(f, "sk=1 LSE", c.fwd.lse, i, s * qk[i]);
      expect(f, "sk=1 dQ", c.bwd.dq, 2 * i, 0);
    }
    expect(f, "sk=1 dK", c.bwd.dk, 0, 0);
    expect(f, "sk=1 dV", c.bwd.dv, 0, 1 + 3 + 5);
    expect(f, "sk=1 dV", c.bwd.dv, 1, 2 + 4 + 6);
  }
  {  // One query, two keys, d = 1: closed-form softmax and gradients.
    Case c(fp32_problem(1, 2, 1, s), {1}, {1, 3}, {5, 7}, {1}, backend, mutation);
    const double p0 = 1 / (1 + std::exp(2 * s)), p1 = 1 - p0;
    expect(f, "2key O", c.fwd.o, 0, 5 * p0 + 7 * p1);
    expect(f, "2key LSE", c.fwd.lse, 0, s + std::log1p(std::exp(2 * s)));
    expect(f, "2key dQ", c.bwd.dq, 0, s * 4 * p0 * p1);
    expect(f, "2key dK", c.bwd.dk, 0, -2 * s * p0 * p1);
    expect(f, "2key dK", c.bwd.dk, 1, 2 * s * p0 * p1);
    expect(f, "2key dV", c.bwd.dv, 0, p0);
    expect(f, "2key dV", c.bwd.dv, 1, p1);
  }
  {  // Causal, seqlen_q = 3 > seqlen_k = 2 (offset -1): row 0 sees no key, row 1 key 0, row 2
     // both. Top-left alignment would give row 0 key 0 and row 1 both keys.
    Problem p = fp32_problem(3, 2, 1, s);
    p.window_right = 0;
    const double q[3] = {1, 2, 3}, k[2] = {1, -1}, v[2] = {4, 8}, dout[3] = {1, -2, 0.5};
    Case c(p, {q[0], q[1], q[2]}, {k[0], k[1]}, {v[0], v[1]}, {dout[0], dout[1], dout[2]}, backend,
           mutation);
    expect(f, "causal sq>sk O", c.fwd.o, 0, 0);
    expect(f, "causal sq>sk LSE", c.fwd.lse, 0, kInfinity);
    expect(f, "causal sq>sk O", c.fwd.o, 1, v[0]);
    expect(f, "causal sq>sk LSE", c.fwd.lse, 1, s * q[1] * k[0]);
    const double z0 = s * q[2] * k[0], z1 = s * q[2] * k[1];
    const double p0 = 1 / (1 + std::exp(z1 - z0)), p1 = 1 - p0;
    expect(f, "causal sq>sk O", c.fwd.o, 2, p0 * v[0] + p1 * v[1]);
    const double dp0 = dout[2] * v[0], dp1 = dout[2] * v[1];
    expect(f, "causal sq>sk dQ", c.bwd.dq, 0, 0);
    expect(f, "causal sq>sk dQ", c.bwd.dq, 1, 0);
    expect(f, "causal sq>sk dQ", c.bwd.dq, 2, s * p0 * p1 * (dp1 - dp0) * (k[1] - k[0]));
    expect(f, "causal sq>sk dK", c.bwd.dk, 0, s * p0 * p1 * (dp0 - dp1) * q[2]);
    expect(f, "causal sq>sk dK", c.bwd.dk, 1, s * p0 * p1 * (dp1 - dp0) * q[2]);
    expect(f, "causal sq>sk dV", c.bwd.dv, 0, dout[1] + p0 * dout[2]);
    expect(f, "causal sq>sk dV", c.bwd.dv, 1, p1 * dout[2]);
  }
  {  // Causal, seqlen_q = 1 < seqlen_k = 2 (offset 1): the single row sees both keys.
    Problem p = fp32_problem(1, 2, 1, s);
    p.window_right = 0;
    Case c(p, {2}, {1, 3}, {5, 7}, {1}, backend, mutation);
    const double p0 = 1 / (1 + std::exp(s * 2 * 2)), p1 = 1 - p0;
    expect(f, "causal sq<sk O", c.fwd.o, 0, 5 * p0 + 7 * p1);
  }
  {  // Local window (1, 0) on 3 x 3: row 2 sees keys 1 and 2 only.
    Problem p = fp32_problem(3, 3, 1, s);
    p.window_left = 1;
    p.window_right = 0;
    Case c(p, {1, 1, 1}, {9, 1, 3}, {100, 5, 7}, {1, 1, 1}, backend, mutation);
    const double p1 = 1 / (1 + std::exp(s * 2)), p2 = 1 - p1;
    expect(f, "window O", c.fwd.o, 2, 5 * p1 + 7 * p2);
  }
  {  // Equal key rows: uniform softmax, O = mean of V, sum_j dS_j = 0 so dQ = 0.
    Problem p = fp32_problem(2, 4, 2, s);
    Case c(p, {1, 2, -1, 0.5}, {1, -2, 1, -2, 1, -2, 1, -2}, {1, 2, 3, 4, 5, 6, 7, 9},
           {1, -1, 2, 0.25}, backend, mutation);
    expect(f, "equal rows O", c.fwd.o, 0, (1 + 3 + 5 + 7) / 4.0);
    expect(f, "equal rows O", c.fwd.o, 1, (2 + 4 + 6 + 9) / 4.0);
    expect(f, "equal rows LSE", c.fwd.lse, 0, s * (1 - 4) + std::log(4.0));
    for (int x = 0; x < 4; ++x) expect(f, "equal rows dQ", c.bwd.dq, x, 0);
  }
  return f;
}

}  // namespace flashproof::reference::checks

namespace flashproof::reference::checks {
namespace {

// A small GQA problem with partially masked rows, inputs in fp16.
Problem gradient_problem() {
  Problem p;
  p.dtype = DType::fp16;
  p.heads_q = 2;
  p.heads_kv = 1;
  p.seqlen_q = 3;
  p.seqlen_k = 4;
  p.head_dim = 3;
  p.window_right = 0;  // causal, bottom-right: row 0 sees keys 0..1
  return p;
}

}  // namespace

// The reference's MPFR gradient against certified central differences of its forward loss
// (reference/finite_difference.h): they may differ by the difference's evaluation and truncation
// errors plus the gradient's own certified error, nothing more.
Failures finite_differences(Mutation mutation) {
  Failures f;
  const Problem p = gradient_problem();
  const Inputs inputs = generate_inputs(p, Distribution{}, 7);
  DenseInputs base(p, inputs.q, inputs.k, inputs.v, &inputs.dout);
  constexpr unsigned bits = 320;
  const double h = 0x1p-30;  // fp16 values plus h * {-1, 0, 1} are exact in double

  const MpfrPrecision prec(bits);
  EngineOutput<MpfrReal> grad;
  allocate(p, true, grad);
  run_backward<MpfrReal>(base, prec.model(),
                         std::vector<std::uint8_t>(p.batch * p.heads_q * p.seqlen_q, 1),
                         std::vector<std::uint8_t>(p.batch * p.heads_kv * p.seqlen_k, 1), grad, 1,
                         mutation);

  struct Target {
    const char* name;
    DenseRows DenseInputs::*rows;
    const std::vector<MpfrReal>* gradient;  // in docs/spec.md's layout [b, s, h, d]
    const std::vector<double>* error;       // its certified bound
  };
  const Target targets[] = {{"dQ", &DenseInputs::q, &grad.dq, &grad.dq_err},
                            {"dK", &DenseInputs::k, &grad.dk, &grad.dk_err},
                            {"dV", &DenseInputs::v, &grad.dv, &grad.dv_err}};
  Rng rng(11);
  for (const Target& t : targets) {
    for (int trial = 0; trial < 3; ++trial) {
      const DenseRows& rows = base.*t.rows;
      std::vector<double> dir(rows.data.size());
      for (double& x : dir) x = static_cast<double>(rng.below(3)) - 1;
      const CentralDifference fd = central_difference(base, t.rows, dir, h, bits);
      // <gradient, dir>, mapping the dense [b][h][s][d] direction onto the [b, s, h, d] layout.
      MpfrReal analytic = 0;
      double mass = 0, analytic_error = 0;
      rows.for_each_element([&](const DenseRows::Element& e) {
        const double u = dir[e.dense];
        analytic += (*t.gradient)[e.spec] * MpfrReal(u);
        mass += std::fabs(static_cast<double>((*t.gradient)[e.spec]) * u);
        analytic_error += (*t.error)[e.spec] * std::fabs(u);
      });
      // The MPFR sum's own rounding is far below 2^-300 of the mass; the double sums of the
      // bounds are covered by 2^-20.
      const double allowed = (fd.evaluation + fd.truncation + analytic_error + 0x1p-300 * mass) * (1 + 0x1p-20);
      const double diff = std::fabs(static_cast<double>(MpfrReal(fd.value) - analytic));
      if (!(diff <= allowed) || mass == 0) {
        std::ostringstream s;
        s << t.name << " direction " << trial << ": finite difference " << fd.value << ", analytic "
          << static_cast<double>(analytic) << " (mass " << mass << ", allowed " << allowed << ")";
        f.push_back(s.str());
      }
    }
  }
  return f;
}

Failures invariants(Backend backend, Mutation mutation) {
  Failures f;
  Problem p;
  p.dtype = DType::bf16;
  p.batch = 2;
  p.heads_q = 4;
  p.heads_kv = 2;
  p.seqlen_q = 9;
  p.seqlen_k = 5;  // causal with sq > sk: rows 0..3 of each head see no key
  p.head_dim = 6;
  p.window_right = 0;
  const Inputs in = generate_inputs(p, Distribution{Distribution::Kind::scaled, 3}, 5);
  Options opt;
  opt.backend = backend;
  opt.mutation = mutation;
  const ForwardResult fwd = forward(p, in.q, in.k, in.v, opt);
  const BackwardResult bwd = backward(p, in.q, in.k, in.v, in.dout, opt);
  const std::int64_t off = p.mask_offset();
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        const std::int64_t last = std::min(i + off, p.seqlen_k - 1);  // causal: keys 0..last
        const std::int64_t lse_x = (b * p.heads_q + h) * p.seqlen_q + i;
        for (std::int64_t c = 0; c < p.head_dim; ++c) {
          const std::int64_t x = ((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + c;
          const double o = fwd.o.value[x], ob = fwd.o.bound[x];
          if (last < 0) {
            if (o != 0 || fwd.lse.value[lse_x] != kInfinity || bwd.dq.value[x] != 0)
              f.push_back("empty row " + std::to_string(i) + ": O, LSE or dQ not 0, +inf, 0");
            continue;
          }
          double lo = kInfinity, hi = -kInfinity;
          for (std::int64_t j = 0; j <= last; ++j) {
            lo = std::min(lo, in.v.get(b, j, p.kv_head(h), c));
            hi = std::max(hi, in.v.get(b, j, p.kv_head(h), c));
          }
          if (!(o >= lo - ob && o <= hi + ob))
            f.push_back("O[" + std::to_string(x) + "] outside the hull of its visible V rows");
        }
      }
  // Rows of P sum to one within the bounds of their entries (engine level: P is internal).
  const DenseInputs dense(p, in.q, in.k, in.v, nullptr);
  const Engine<double> engine(dense, double_model(), mutation);
  Engine<double>::Row row;
  for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
    engine.forward_row(1, 3, i, row);
    double sum = 0, err = 0;
    for (std::size_t t = 0; t < row.prob.size(); ++t) {
      sum += row.prob[t];
      err += row.prob_err[t];
    }
    if (!row.keys.empty() && !(std::fabs(sum - 1) <= err + row.prob.size() * 0x1p-52))
      f.push_back("row " + std::to_string(i) + " of P sums to " + std::to_string(sum));
  }
  return f;
}

}  // namespace flashproof::reference::checks
