#include "properties/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bounds/implementation_bounds.h"
#include "reference/finite_difference.h"
#include "reference/arith.h"
#include "reference/dense_inputs.h"

namespace flashproof::properties {
namespace {

using reference::CentralDifference;
using reference::DenseInputs;
using reference::DenseRows;
constexpr unsigned kBits = 256, kMaxBits = 4096;
// The step starts 2^-30 below the largest element and shrinks, by at most 2^-60 more, until the
// difference quotient's truncation bound fits an eighth of the allowance.
constexpr int kFirstStep = -30, kLastStep = -90;

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

// The check passed the tensor having admitted at least as many infinities as it holds, and it
// holds no NaN.
bool admits_every_infinity(const TensorCheck& check, const HostTensor& g) {
  if (check.verdict == Verdict::fail) return false;
  std::int64_t infinities = 0;
  bool nan = false;
  g.for_each_value([&](std::size_t, double x) {
    nan = nan || std::isnan(x);
    infinities += std::isinf(x);
  });
  return !nan && infinities <= check.inf_within_bound + check.overflow_as_inf + check.opposite_inf_within_bound;
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
    const TensorCheck* check = nullptr;
    for (const TensorCheck& x : record.tensors)
      if (x.name == t.name) check = &x;
    if (check == nullptr) return {false, std::string("the check has no ") + t.name, {}};
    // The direction's pattern is drawn once; each step leaves out the elements it cannot perturb
    // exactly in double.
    std::vector<double> pattern(rows.data.size()), dir(rows.data.size());
    for (double& x : pattern) x = static_cast<double>(rng() % 3) - 1;
    double h = 0, analytic = 0, budget = 0;
    std::string not_judged;
    for (int step = kFirstStep;;) {
      h = std::ldexp(1.0, std::ilogb(largest) + step);
      for (std::size_t x = 0; x < dir.size(); ++x)
        dir[x] = exact_sum(rows.data[x], h * pattern[x]) && exact_sum(rows.data[x], -h * pattern[x]) ? pattern[x] : 0;
      double mass = 0, weight = 0, bound_sum = 0;
      analytic = 0;
      rows.for_each_element([&](const DenseRows::Element& e) {
        const double u = dir[e.dense];
        const double g = t.gradient->get(e.b, e.s, e.h, e.d);
        analytic += g * u;
        mass += std::fabs(g * u);
        weight += std::fabs(u);
        if (u != 0) bound_sum += (*t.bound)[e.spec];
      });
      // A NaN or infinite element makes <g, u> NaN or infinite whatever u (0 x NaN is NaN). That
      // fails, unless the check admitted every such element as an inf its rigorous bound reaches
      // (or the signed inf of an exact value beyond the range): no difference quotient compares
      // with an inf there.
      if (!std::isfinite(analytic)) {
        if (admits_every_infinity(*check, *t.gradient)) {
          not_judged = " not judged (an infinity the check admits)";
          break;
        }
        return {false, std::string(t.name) + ": <" + t.name + ", u> = " + exact(analytic) + " (an element is not finite)", {}};
      }
      // The accuracy tolerance where rule 3 applies; beyond its range (logits so large that their
      // fp32 rounding moves P) the tolerance means nothing, and a gradient within its rigorous
      // bound B can be off by sum |u| B from the exact one.
      const double spread = check->regression_applies ? check->tolerance * weight : bound_sum * (1 + 0x1p-20);
      if (!std::isfinite(spread)) {
        not_judged = " not judged (no finite bound)";
        break;
      }
      // <g, u> rounds in its sum only (g u is exact for u in {-1, 0, 1}).
      budget = spread + reference::gamma_n(static_cast<double>(dir.size()) + 2, 0x1p-53) * mass + 1e-300;
      const double truncation = reference::difference_truncation_bound(base, t.rows, dir, h);
      if (truncation <= budget / 8) break;
      // The bound goes as h^2: shrink h by as many powers of two as that takes.
      const double excess = truncation / (budget / 8);
      step -= std::isfinite(excess) ? std::max(1, static_cast<int>(std::ceil(std::log2(excess) / 2))) : kFirstStep - kLastStep + 1;
      if (step < kLastStep || std::ldexp(1.0, std::ilogb(largest) + step) == 0) {
        not_judged = " not judged (the difference quotient's truncation bound exceeds the allowance at every step)";
        break;
      }
    }
    if (!not_judged.empty()) {
      tags.push_back(t.name + not_judged);
      continue;
    }
    // L's own error enters the difference divided by 2h. Where it would take more than an eighth
    // of the budget (a gradient tiny against the loss, e.g. subnormal data, cancels more than
    // 256 bits), L is evaluated again with as many more bits as that takes, up to kMaxBits.
    unsigned bits = kBits;
    CentralDifference fd = reference::central_difference(base, t.rows, dir, h, bits);
    while (!(fd.evaluation <= budget / 8) && std::isfinite(fd.evaluation) && bits < kMaxBits) {
      const double excess = fd.evaluation / (budget / 8);
      bits = std::isfinite(excess) ? std::min(kMaxBits, bits + static_cast<unsigned>(std::ceil(std::log2(excess))) + 16) : kMaxBits;
      fd = reference::central_difference(base, t.rows, dir, h, bits);
    }
    if (!(fd.evaluation <= budget / 8)) {
      tags.push_back(std::string(t.name) + " not judged (the finite difference needs more than " +
                     std::to_string(kMaxBits) + " bits)");
      continue;
    }
    const double allowed = budget + fd.evaluation + fd.truncation;
    if (!(std::fabs(analytic - fd.value) <= allowed))
      return {false,
              std::string(t.name) + ": <" + t.name + ", u> = " + exact(analytic) + " but the reference's finite difference is " +
                  exact(fd.value) + " at " + std::to_string(bits) + " bits (allowed " + exact(allowed) + ")",
              {}};
  }
  return {true, {}, tags};
}

}  // namespace flashproof::properties
