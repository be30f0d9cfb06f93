// The error-free dot products of reference/arith.h against MPFR: Sum2's pair within gamma_2n^2 S
// and Sum3's triple within gamma_n^3 S of the exact sum, S = sum |a_c b_c|, in their scalar and
// their four-lane forms, on rows built for cancellation across wide exponent ranges.
#include "reference/arith.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <random>
#include <vector>

namespace flashproof::reference {
namespace {

constexpr double kU = 0x1p-53;

// |x1 + x2 + x3 - sum a_c b_c| computed exactly (products of two doubles need 106 bits; the
// exponents here span less than 1500 binades), rounded up to double.
double exact_error(const std::vector<double>& a, const std::vector<double>& b, const DotTriple& x) {
  mpfr_t sum, term;
  mpfr_init2(sum, 4096);
  mpfr_init2(term, 4096);
  mpfr_set_zero(sum, 1);
  for (std::size_t c = 0; c < a.size(); ++c) {
    mpfr_set_d(term, a[c], MPFR_RNDN);
    mpfr_mul_d(term, term, b[c], MPFR_RNDN);
    mpfr_add(sum, sum, term, MPFR_RNDN);
  }
  for (double part : {x.s1, x.s2, x.s3}) mpfr_sub_d(sum, sum, part, MPFR_RNDN);
  const double err = std::fabs(mpfr_get_d(sum, MPFR_RNDU));
  mpfr_clears(sum, term, static_cast<mpfr_ptr>(nullptr));
  return err;
}

double mass(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t c = 0; c < a.size(); ++c) s += std::fabs(a[c] * b[c]);
  return s * (1 + gamma_n(static_cast<double>(a.size()), kU));  // rounded up
}

// Rows of fp32-like values (24 bits: every product exact in double) over a wide exponent range,
// each value followed somewhere by its negation or a near copy, so that the leading parts cancel
// and the sum lives in the chains' error terms.
void cancelling_rows(std::mt19937_64& rng, std::int64_t n, std::vector<double>& a, std::vector<double>& b) {
  a.assign(static_cast<std::size_t>(n), 0);
  b.assign(static_cast<std::size_t>(n), 0);
  std::uniform_int_distribution<int> exponent(-60, 60), coin(0, 3);
  std::uniform_int_distribution<std::int64_t> mantissa(1 << 23, (1 << 24) - 1);
  for (std::int64_t c = 0; c < n; ++c) {
    a[c] = std::ldexp(static_cast<double>(mantissa(rng)), exponent(rng) - 23) * (coin(rng) < 2 ? 1 : -1);
    b[c] = std::ldexp(static_cast<double>(mantissa(rng)), exponent(rng) - 23);
  }
  for (std::int64_t c = 1; c < n; c += 2) {  // pair c with an earlier term, mostly cancelling
    const std::int64_t partner = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c));
    a[c] = coin(rng) == 0 ? a[partner] : -a[partner];
    b[c] = coin(rng) < 3 ? b[partner] : std::ldexp(b[partner], 1);
  }
}

TEST(DotProducts, TriplesAndPairsMeetTheirBoundsAgainstMpfr) {
  std::mt19937_64 rng(2026);
  std::vector<double> a, b;
  for (std::int64_t n : {1, 3, 4, 7, 8, 31, 32, 33, 35, 64, 100, 257, 1000}) {
    for (int trial = 0; trial < 40; ++trial) {
      cancelling_rows(rng, n, a, b);
      const double s = mass(a, b), dn = static_cast<double>(n);
      const double g = gamma_n(dn, kU), g2 = gamma_n(2 * dn, kU);
      const DotTriple t3 = dot_sum3(a.data(), b.data(), n), t2 = dot_sum2(a.data(), b.data(), n);
      EXPECT_LE(exact_error(a, b, t3), g * g * g * s) << "Sum3, n = " << n << ", trial " << trial;
      EXPECT_LE(exact_error(a, b, t2), g2 * g2 * s) << "Sum2, n = " << n << ", trial " << trial;
    }
  }
}

// A row whose sum is left entirely in the lower levels: the large terms cancel only across lanes
// (a term and its negation are neighbours, so they sit in different lanes), and the small ones
// enter chains whose partial sums are large, so they survive only as TwoSum errors.
TEST(DotProducts, LowerLevelsCarryTheSumWhenTheLeadingPartsCancel) {
  for (std::int64_t n : {16, 31, 32, 36, 64, 99}) {
    std::vector<double> a(static_cast<std::size_t>(n), 0), b(static_cast<std::size_t>(n), 1);
    const std::int64_t m = n - 2;
    for (std::int64_t c = 0; c + 1 < m; c += 2) {
      a[c] = 0x1p80 * static_cast<double>(1 + c % 5);
      a[c + 1] = -a[c];
    }
    a[static_cast<std::size_t>(n - 2)] = 1;
    a[static_cast<std::size_t>(n - 1)] = 0x1p-40;
    const DotTriple t = dot_sum3(a.data(), b.data(), n);
    const double s = mass(a, b), g = gamma_n(static_cast<double>(n), kU);
    EXPECT_LE(exact_error(a, b, t), g * g * g * s) << n;
    EXPECT_EQ(t.s1 + t.s2 + t.s3, 1 + 0x1p-40) << n;
  }
}

}  // namespace
}  // namespace flashproof::reference
