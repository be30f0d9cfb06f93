#include "properties/gradient_check.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "reference/dense_inputs.h"
#include "reference/instantiations.h"

namespace flashproof::properties {
namespace {

using reference::DenseInputs;
using reference::DenseRows;
using reference::MpfrReal;

constexpr unsigned kBits = 256;

// L = sum(O * dO), O from the MPFR engine.
MpfrReal loss(const DenseInputs& in) {
  const reference::MpfrPrecision precision(kBits);
  reference::EngineOutput<MpfrReal> out;
  reference::allocate(in.p, false, out);
  const Problem& p = in.p;
  reference::run_forward<MpfrReal>(in, precision.model(),
                                   std::vector<std::uint8_t>(static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q), 1),
                                   out, 1, reference::Mutation::none);
  MpfrReal sum = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t d = 0; d < p.head_dim; ++d)
          sum += out.o[static_cast<std::size_t>(((b * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + d)] *
                 MpfrReal(in.dout.row(b, h, i)[d]);
  return sum;
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

  struct Target {
    const char* name;
    DenseRows DenseInputs::*rows;
    const HostTensor* gradient;  // [b, s, h, d]
  };
  const Target targets[] = {{"dQ", &DenseInputs::q, &out.dq}, {"dK", &DenseInputs::k, &out.dk}, {"dV", &DenseInputs::v, &out.dv}};
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
    const double fd = static_cast<double>(
        (loss(reference::perturbed(base, t.rows, dir, h)) - loss(reference::perturbed(base, t.rows, dir, -h))) /
        MpfrReal(2 * h));
    double analytic = 0, mass = 0, weight = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t hh = 0; hh < rows.heads; ++hh)
        for (std::int64_t s = 0; s < rows.seqlen; ++s)
          for (std::int64_t d = 0; d < p.head_dim; ++d) {
            const double u = dir[static_cast<std::size_t>(((b * rows.heads + hh) * rows.seqlen + s) * p.head_dim + d)];
            const double g = t.gradient->get(b, s, hh, d);
            analytic += g * u;
            mass += std::fabs(g * u);
            weight += std::fabs(u);
          }
    double tolerance = 0;
    for (const TensorCheck& check : record.tensors)
      if (check.name == t.name) tolerance = check.tolerance;
    const double allowed = tolerance * weight + 0x1p-40 * mass + 1e-300;
    if (!std::isfinite(analytic) || !(std::fabs(analytic - fd) <= allowed))
      return {false,
              std::string(t.name) + ": <" + t.name + ", u> = " + exact(analytic) + " but the reference's finite difference is " +
                  exact(fd) + " (allowed " + exact(allowed) + ")",
              {}};
  }
  return {};
}

}  // namespace flashproof::properties
