#include "properties/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bounds/implementation_bounds.h"
#include "reference/dense_inputs.h"
#include "reference/instantiations.h"

namespace flashproof::properties {
namespace {

using reference::DenseInputs;
using reference::DenseRows;
using reference::MpfrReal;

constexpr unsigned kBits = 256, kMaxBits = 4096;

// L = sum(O * dO) at the MPFR precision in scope, O from the MPFR engine, with a bound on
// |L - exact L|: the engine's bound on each O element times |dO|, plus the rounding of the
// products and of the sum (gamma_2N of their magnitude); the double sums of the bound are covered
// by the final 2^-20.
struct Loss {
  MpfrReal value;
  double error;
};
Loss loss(const DenseInputs& in, const reference::MpfrPrecision& precision) {
  reference::EngineOutput<MpfrReal> out;
  reference::allocate(in.p, false, out);
  const Problem& p = in.p;
  reference::run_forward<MpfrReal>(in, precision.model(),
                                   std::vector<std::uint8_t>(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 1),
                                   out, 1, reference::Mutation::none);
  MpfrReal sum = 0;
  double error = 0, magnitude = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t d = 0; d < p.head_dim; ++d) {
          const auto x = static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + d);
          const double dout = in.dout.row(b, h, i)[d];
          const MpfrReal term = out.o[x] * MpfrReal(dout);
          sum += term;
          error += out.o_err[x] * std::fabs(dout);
          magnitude += std::fabs(static_cast<double>(term));
        }
  const double terms = static_cast<double>(out.o.size());
  return {sum, (error + reference::gamma_n(2 * terms + 2, precision.model().u) * magnitude) * (1 + 0x1p-20)};
}

// (L(x + h u) - L(x - h u)) / 2h at `bits`, with a bound on its error from evaluating L (not the
// truncation error of the difference quotient: h is chosen far below the data).
struct Difference {
  double value, error;
};
Difference central_difference(const DenseInputs& base, DenseRows DenseInputs::*rows, const std::vector<double>& dir,
                              double h, unsigned bits) {
  const reference::MpfrPrecision precision(bits);
  const Loss plus = loss(reference::perturbed(base, rows, dir, h), precision);
  const Loss minus = loss(reference::perturbed(base, rows, dir, -h), precision);
  const double value = static_cast<double>((plus.value - minus.value) / MpfrReal(2 * h));
  // The subtraction and the division round at `bits`, the conversion to double once more.
  const double rounding = (4 * precision.model().u + 0x1p-53) * std::fabs(value);
  return {value, ((plus.error + minus.error) / (2 * h) + rounding) * (1 + 0x1p-20)};
}

// x + y is exact in double (TwoSum's error term is 0).
bool exact_sum(double x, double y) {
  const double s = x + y, z = s - x;
  return (x - (s - z)) + (y - z) == 0;
}

std::string exact(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

}  // namespace

Outcome gradient_finite_differences(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const CheckRecord record = run_check(c, impl);
  if (!record.in_domain) return {true, {}, {"not judged (out of domain)"}};
  const Inputs in = generate_inputs(p, c.dist, c.seed);
  const Outputs out = run_implementation(impl, p, true, in);
  const DenseInputs base(p, in.q, in.k, in.v, &in.dout);
  const bounds::ImplementationBounds bound = bounds::implementation_bounds(p, in, impl.arithmetic_model(), true);

  struct Target {
    const char* name;
    DenseRows DenseInputs::*rows;
    const HostTensor* gradient;          // [b, s, h, d]
    const std::vector<double>* bound;    // rigorous bound, dense over [b, s, h, d]
  };
  const Target targets[] = {{"dQ", &DenseInputs::q, &out.dq, &bound.dq},
                            {"dK", &DenseInputs::k, &out.dk, &bound.dk},
                            {"dV", &DenseInputs::v, &out.dv, &bound.dv}};
  std::vector<std::string> tags;
  std::mt19937_64 rng(c.seed ^ 0x9E3779B97F4A7C15ULL);
  for (const Target& t : targets) {
    const DenseRows& rows = base.*t.rows;
    double largest = 0;
    for (double x : rows.data) largest = std::max(largest, std::fabs(x));
    if (largest == 0) continue;
    // h 2^-30 below the largest element: the difference quotient's error (h^2 |L'''| / 6) is far
    // below what is compared, and most perturbed values stay exact in double.
    const double h = std::ldexp(1.0, std::ilogb(largest) - 30);
    std::vector<double> dir(rows.data.size());
    for (std::size_t x = 0; x < dir.size(); ++x) {
      dir[x] = static_cast<double>(rng() % 3) - 1;
      if (!exact_sum(rows.data[x], h * dir[x]) || !exact_sum(rows.data[x], -h * dir[x])) dir[x] = 0;
    }
    double analytic = 0, mass = 0, weight = 0, bound_sum = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t hh = 0; hh < rows.heads; ++hh)
        for (std::int64_t s = 0; s < rows.seqlen; ++s)
          for (std::int64_t d = 0; d < p.head_dim; ++d) {
            const double u = dir[static_cast<std::size_t>(((b * rows.heads + hh) * rows.seqlen + s) * p.head_dim + d)];
            const double g = t.gradient->get(b, s, hh, d);
            analytic += g * u;
            mass += std::fabs(g * u);
            weight += std::fabs(u);
            if (u != 0) bound_sum += (*t.bound)[static_cast<std::size_t>(((b * rows.seqlen + s) * rows.heads + hh) * p.head_dim + d)];
          }
    const TensorCheck* check = nullptr;
    for (const TensorCheck& x : record.tensors)
      if (x.name == t.name) check = &x;
    if (check == nullptr) return {false, std::string("the check has no ") + t.name, {}};
    // The accuracy tolerance where rule 3 applies; beyond its range (logits so large that their
    // fp32 rounding moves P) the tolerance means nothing, and a gradient within its rigorous
    // bound B can be off by sum |u| B from the exact one.
    const double spread = check->regression_applies ? check->tolerance * weight : bound_sum * (1 + 0x1p-20);
    if (!std::isfinite(spread)) {
      tags.push_back(std::string(t.name) + " not judged (no finite bound)");
      continue;
    }
    const double budget = spread + 0x1p-40 * mass + 1e-300;
    // L's own error enters the difference divided by 2h. Where it would take more than an eighth
    // of the budget (a gradient tiny against the loss, e.g. subnormal data, cancels more than
    // 256 bits), L is evaluated again with as many more bits as that takes, up to kMaxBits.
    unsigned bits = kBits;
    Difference fd = central_difference(base, t.rows, dir, h, bits);
    while (!(fd.error <= budget / 8) && std::isfinite(fd.error) && bits < kMaxBits) {
      bits = std::min(kMaxBits, bits + static_cast<unsigned>(std::ceil(std::log2(fd.error / (budget / 8)))) + 16);
      fd = central_difference(base, t.rows, dir, h, bits);
    }
    if (!(fd.error <= budget / 8)) {
      tags.push_back(std::string(t.name) + " not judged (the finite difference needs more than " +
                     std::to_string(kMaxBits) + " bits)");
      continue;
    }
    const double allowed = budget + fd.error;
    if (!std::isfinite(analytic) || !(std::fabs(analytic - fd.value) <= allowed))
      return {false,
              std::string(t.name) + ": <" + t.name + ", u> = " + exact(analytic) + " but the reference's finite difference is " +
                  exact(fd.value) + " at " + std::to_string(bits) + " bits (allowed " + exact(allowed) + ")",
              {}};
  }
  return {true, {}, tags};
}

}  // namespace flashproof::properties
