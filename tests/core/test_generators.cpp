#include "core/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/rng.h"

namespace flashproof {
namespace {

using Kind = Distribution::Kind;

template <class Fn>
void for_each(const HostTensor& t, Fn&& fn) {
  const Shape& s = t.shape();
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d) fn(a, b, c, d);
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v;
  for_each(t, [&](auto a, auto b, auto c, auto d) { v.push_back(t.get(a, b, c, d)); });
  return v;
}

// FNV-1a over the element bits in logical order, little-endian, dtype width.
std::uint64_t hash_bits(const HostTensor& t, std::uint64_t h = 0xcbf29ce484222325ull) {
  for_each(t, [&](auto a, auto b, auto c, auto d) {
    const std::uint32_t x = t.bits(a, b, c, d);
    for (int i = 0; i < dtype_bytes(t.dtype()); ++i) {
      h ^= (x >> (8 * i)) & 0xFF;
      h *= 0x100000001b3ull;
    }
  });
  return h;
}
std::uint64_t hash_inputs(const Inputs& in) {
  return hash_bits(in.dout, hash_bits(in.v, hash_bits(in.k, hash_bits(in.q))));
}

Problem make(DType dt, std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t sq,
             std::int64_t sk, std::int64_t d) {
  Problem p;
  p.dtype = dt;
  p.batch = b;
  p.heads_q = hq;
  p.heads_kv = hkv;
  p.seqlen_q = sq;
  p.seqlen_k = sk;
  p.head_dim = d;
  return p;
}

// Scaled logits of row (b, i, h) against every key.
std::vector<double> logits(const Problem& p, const Inputs& in, std::int64_t b, std::int64_t i,
                           std::int64_t h) {
  std::vector<double> s;
  for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
    double dot = 0;
    for (std::int64_t e = 0; e < p.head_dim; ++e)
      dot += in.q.get(b, i, h, e) * in.k.get(b, j, p.kv_head(h), e);
    s.push_back(p.softmax_scale() * dot);
  }
  return s;
}

struct Classes {
  std::int64_t nan = 0, inf = 0, neg_zero = 0, subnormal = 0, normal = 0, n = 0;
};
Classes classify(const HostTensor& t) {
  Classes c;
  for (double x : values(t)) {
    ++c.n;
    if (std::isnan(x)) ++c.nan;
    else if (std::isinf(x)) ++c.inf;
    else if (x == 0 && std::signbit(x)) ++c.neg_zero;
    else if (x != 0 && std::fabs(x) < from_bits(t.dtype(), 1u << dtype_mantissa_bits(t.dtype())))
      ++c.subnormal;
    else if (x != 0) ++c.normal;
  }
  return c;
}

TEST(Rng, KnownSequenceAndStreams) {
  // SplitMix64's published first output for seed 0 pins the mixer.
  std::uint64_t s = 0;
  EXPECT_EQ(splitmix64(s), 0xE220A8397B1DCDAFull);
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next(), b.next());
  EXPECT_NE(Rng(42).next(), c.next());
  EXPECT_NE(derive(1, 0), derive(1, 1));
  EXPECT_NE(derive(1, 0), derive(2, 0));
  Rng u(7);
  for (int i = 0; i < 10000; ++i) {
    const double x = u.uniform(), y = u.uniform(-1, 1);
    ASSERT_TRUE(x >= 0 && x < 1);
    ASSERT_TRUE(y >= -1 && y < 1);
    ASSERT_LT(u.below(5), 5u);
  }
}

TEST(Distribution, ParseAndName) {
  for (const std::string& n : distribution_names()) {
    auto d = parse_distribution(n);
    ASSERT_TRUE(d) << n;
    EXPECT_EQ(distribution_name(*d), n);
  }
  EXPECT_EQ(distribution_names().size(), 10u);
  auto s = parse_distribution("scaled:5");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Kind::scaled);
  EXPECT_EQ(s->param, 5);
  EXPECT_EQ(distribution_name(*s), "scaled:5");
  EXPECT_EQ(effective_param(*parse_distribution("scaled")), 4);
  auto l = parse_distribution("large-logits:1e4");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->param, 1e4);
  EXPECT_EQ(parse_distribution(distribution_name(*l))->param, 1e4);
  EXPECT_EQ(effective_param(*parse_distribution("large-logits")), 1e3);
  for (const char* bad : {"", "gauss", "scaled:", "scaled:x", "scaled:0", "scaled:-2",
                          "scaled:inf", "scaled:4x", "normal:3", "growing-max:1", "special:2",
                          "Normal", "large_logits"})
    EXPECT_FALSE(parse_distribution(bad)) << bad;
}

// Golden hashes: the same (problem, distribution, seed) must give these bits on every machine.
// A change here means generated cases (and saved fuzz failures) are no longer reproducible.
TEST(Generators, GoldenHashes) {
  Problem p1 = make(DType::fp16, 2, 4, 2, 7, 9, 24);
  Problem p2 = make(DType::bf16, 1, 2, 1, 5, 33, 16);
  Problem p3 = make(DType::fp32, 1, 3, 3, 4, 6, 8);
  p3.scale = 0.25f;
  struct Case {
    const Problem& p;
    const char* dist;
    std::uint64_t seed, hash;
  };
  const Case cases[] = {
      {p1, "normal", 1, 0x16c757fb0ca96e4aull},
      {p2, "uniform", 2, 0x96403745bd416412ull},
      {p3, "large-logits:100", 3, 0x627743e25a06242dull},
      {p1, "bits", 4, 0xbd97e47c89ab6cb6ull},
  };
  for (const Case& c : cases) {
    const Inputs in = generate_inputs(c.p, *parse_distribution(c.dist), c.seed);
    EXPECT_EQ(hash_inputs(in), c.hash) << c.dist << " 0x" << std::hex << hash_inputs(in);
  }
}

// Odd head dims (a row's last normal draw leaves its pair's second value unused) and the kinds
// that mix normal draws with others; hashes taken before rows drew their normals in batches
// (Rng::fill_normal), which must not change a bit.
TEST(Generators, GoldenHashesOddRows) {
  const Problem a = make(DType::fp16, 1, 2, 1, 5, 6, 7), b = make(DType::bf16, 2, 3, 3, 4, 9, 9),
                c = make(DType::fp32, 1, 2, 2, 3, 4, 1);
  struct Case {
    const Problem& p;
    const char* dist;
    std::uint64_t seed, hash;
  };
  const Case cases[] = {
      {a, "normal", 5, 0x2d7db8c3600e0f00ull},       {b, "scaled:5", 6, 0xaf7a41057a27b72cull},
      {c, "normal", 7, 0xa8abc3ac2113f8dcull},       {a, "dominant-key", 8, 0x7df026c1b08ca102ull},
      {b, "special", 9, 0xe29897cd7dc955bfull},      {a, "equal-rows", 10, 0x3d5351f096b1d739ull},
  };
  for (const Case& x : cases) {
    const Inputs in = generate_inputs(x.p, *parse_distribution(x.dist), x.seed);
    EXPECT_EQ(hash_inputs(in), x.hash) << x.dist << " 0x" << std::hex << hash_inputs(in);
  }
}

// fill_normal(n) is n successive normal() calls: the same values, and the same state after (the
// spare of an odd count, and a spare left by an earlier call, carried as normal() carries them).
TEST(Rng, FillNormalIsSuccessiveNormals) {
  for (std::int64_t n = 0; n <= 70; ++n)
    for (bool spare_before : {false, true}) {
      Rng one(1000 + static_cast<std::uint64_t>(n)), batch(1000 + static_cast<std::uint64_t>(n));
      if (spare_before) {
        EXPECT_EQ(one.normal(), batch.normal());
      }
      std::vector<double> expected(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n));
      for (double& x : expected) x = one.normal();
      batch.fill_normal(got.data(), n);
      ASSERT_EQ(got, expected) << n;
      for (int k = 0; k < 3; ++k) ASSERT_EQ(batch.normal(), one.normal()) << n;
      ASSERT_EQ(batch.next(), one.next()) << n;
    }
}

TEST(Generators, DeterministicAndSeedSensitive) {
  const Problem p = make(DType::fp16, 2, 4, 2, 17, 33, 40);
  for (const std::string& name : distribution_names()) {
    const Distribution d = *parse_distribution(name);
    const Inputs a = generate_inputs(p, d, 123), b = generate_inputs(p, d, 123);
    const Inputs c = generate_inputs(p, d, 124);
    EXPECT_EQ(hash_inputs(a), hash_inputs(b)) << name;
    EXPECT_NE(hash_inputs(a), hash_inputs(c)) << name;
    // Q, K, V differ from each other (independent streams).
    EXPECT_NE(hash_bits(a.k), hash_bits(a.v)) << name;
    EXPECT_NE(hash_bits(a.q), hash_bits(a.dout)) << name;
    EXPECT_EQ(a.q.shape(), p.q_shape());
    EXPECT_EQ(a.k.shape(), p.kv_shape());
    EXPECT_EQ(a.dout.dtype(), DType::fp16);
    EXPECT_TRUE(a.q.is_contiguous());
    if (name != "bits" && name != "special") {
      for (const HostTensor* t : {&a.q, &a.k, &a.v, &a.dout})
        for (double x : values(*t)) ASSERT_TRUE(std::isfinite(x)) << name;
    }
  }
}

TEST(Generators, LargeTensorsDoNotDependOnThreads) {
  // Above the parallel threshold rows are generated on several threads; the row streams make the
  // result equal to generating a sub-tensor of the same rows (first batch) on one thread.
  const Problem big = make(DType::bf16, 2, 2, 1, 200, 8, 128);    // Q: 102400 elements
  const Problem small = make(DType::bf16, 1, 2, 1, 200, 8, 128);  // Q: 51200, one thread
  const Distribution d{Kind::normal, 0};
  const HostTensor q_big = generate_inputs(big, d, 9).q;
  const HostTensor q_small = generate_inputs(small, d, 9).q;
  for_each(q_small, [&](auto a, auto b, auto c, auto e) {
    ASSERT_EQ(q_small.bits(a, b, c, e), q_big.bits(a, b, c, e));
  });
}

TEST(Generators, NormalStatistics) {
  HostTensor t(DType::fp32, {1, 1000, 1, 100});
  fill(t, {Kind::normal, 0}, 5);
  double s1 = 0, s2 = 0, s4 = 0;
  const auto v = values(t);
  for (double x : v) s1 += x;
  const double mean = s1 / v.size();
  for (double x : v) {
    s2 += (x - mean) * (x - mean);
    s4 += std::pow(x - mean, 4);
  }
  const double var = s2 / v.size(), kurt = s4 / v.size() / (var * var);
  EXPECT_NEAR(mean, 0, 0.02);   // ~6 standard errors
  EXPECT_NEAR(var, 1, 0.03);    // sd(var) = sqrt(2/n) = 0.0045
  EXPECT_NEAR(kurt, 3, 0.12);   // sd(kurtosis) = sqrt(24/n) = 0.015; sum of uniforms fails
  const auto tail = std::count_if(v.begin(), v.end(), [](double x) { return std::fabs(x) > 3; });
  EXPECT_NEAR(tail / double(v.size()), 0.0027, 0.001);
}

TEST(Generators, UniformAndScaled) {
  for (DType dt : {DType::fp16, DType::bf16, DType::fp32}) {
    HostTensor t(dt, {1, 1000, 1, 100});
    fill(t, {Kind::uniform, 0}, 6);
    double s1 = 0, s2 = 0;
    for (double x : values(t)) {
      ASSERT_TRUE(x >= -1 && x < 1) << x;
      s1 += x;
      s2 += x * x;
    }
    EXPECT_NEAR(s1 / t.numel(), 0, 0.01);
    EXPECT_NEAR(s2 / t.numel(), 1.0 / 3, 0.01);
  }
  HostTensor t(DType::fp32, {1, 1000, 1, 100});
  fill(t, *parse_distribution("scaled:5"), 7);
  double s2 = 0;
  for (double x : values(t)) s2 += x * x;
  EXPECT_NEAR(std::sqrt(s2 / t.numel()), 5, 0.05);
}

TEST(Generators, LargeLogitsReachTarget) {
  for (DType dt : {DType::fp16, DType::bf16}) {
    for (double target : {1e2, 1e3, 1e4}) {
      const Problem p = make(dt, 1, 2, 1, 32, 64, 64);
      const Inputs in = generate_inputs(p, {Kind::large_logits, target}, 11);
      double mx = 0;
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t i = 0; i < p.seqlen_q; ++i)
          for (double s : logits(p, in, 0, i, h)) mx = std::max(mx, std::fabs(s));
      EXPECT_GT(mx, 0.1 * target) << dtype_name(dt);
      EXPECT_LT(mx, 10 * target) << dtype_name(dt);
      for (double x : values(in.q)) ASSERT_TRUE(std::isfinite(x));
    }
  }
}

TEST(Generators, DominantKeyTakesTheSoftmax) {
  for (std::int64_t d : {1, 8, 64, 256, -64}) {  // -64: d = 64 with a negative scale
    Problem p = make(DType::fp16, 2, 4, 2, 16, 100, std::abs(d));
    if (d < 0) p.scale = -0.125f;
    const Inputs in = generate_inputs(p, {Kind::dominant_key, 0}, 12);
    double sum_pmax = 0;
    int rows = 0;
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t h = 0; h < p.heads_q; ++h)
        for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
          const auto s = logits(p, in, b, i, h);
          const double m = *std::max_element(s.begin(), s.end());
          double z = 0;
          for (double x : s) z += std::exp(x - m);
          sum_pmax += 1 / z;
          ++rows;
        }
    EXPECT_GT(sum_pmax / rows, 0.99) << "d=" << d;
  }
}

TEST(Generators, EqualRowsGiveEqualKeys) {
  const Problem p = make(DType::bf16, 2, 4, 2, 8, 20, 16);
  const Inputs in = generate_inputs(p, {Kind::equal_rows, 0}, 13);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t g = 0; g < p.heads_kv; ++g)
      for (std::int64_t j = 1; j < p.seqlen_k; ++j)
        for (std::int64_t e = 0; e < p.head_dim; ++e)
          ASSERT_EQ(in.k.bits(b, j, g, e), in.k.bits(b, 0, g, e));
  EXPECT_NE(in.k.bits(0, 0, 0, 0), in.k.bits(0, 0, 1, 0));  // per (b, g), not one global row
  EXPECT_NE(in.v.bits(0, 0, 0, 0), in.v.bits(0, 1, 0, 0));
  EXPECT_NE(in.q.bits(0, 0, 0, 0), in.q.bits(0, 1, 0, 0));
}

TEST(Generators, GrowingMaxRisesEveryBlock) {
  for (DType dt : {DType::fp16, DType::bf16}) {
    const Problem p = make(dt, 1, 2, 1, 8, 1000, 32);
    const Inputs in = generate_inputs(p, {Kind::growing_max, 0}, 14);
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
        const auto s = logits(p, in, 0, i, h);
        double prev = -INFINITY;
        for (std::size_t j0 = 0; j0 < s.size(); j0 += 16) {
          const double m = *std::max_element(s.begin() + j0,
                                             s.begin() + std::min(s.size(), j0 + 16));
          ASSERT_GT(m, prev) << dtype_name(dt) << " block " << j0 / 16;
          prev = m;
        }
        EXPECT_GT(s.back(), 20 * s.front());  // grows by ~G = 32 overall
      }
  }
}

TEST(Generators, SubnormalMostlySubnormal) {
  for (DType dt : {DType::fp16, DType::bf16, DType::fp32}) {
    const Problem p = make(dt, 1, 2, 2, 16, 16, 32);
    const Inputs in = generate_inputs(p, {Kind::subnormal, 0}, 15);
    for (const HostTensor* t : {&in.q, &in.k, &in.v}) {
      const Classes c = classify(*t);
      EXPECT_GT(c.subnormal, c.n / 2) << dtype_name(dt);
      EXPECT_GT(c.normal, 0) << dtype_name(dt);
      EXPECT_EQ(c.nan + c.inf, 0);
    }
  }
}

TEST(Generators, BitsAndSpecialCoverEveryClass) {
  for (const char* name : {"bits", "special"}) {
    for (DType dt : {DType::fp16, DType::bf16, DType::fp32}) {
      const Problem p = make(dt, 1, 2, 1, 16, 16, 32);  // 1024 and 512 elements
      const Inputs in = generate_inputs(p, *parse_distribution(name), 16);
      for (const HostTensor* t : {&in.q, &in.k, &in.v, &in.dout}) {
        const Classes c = classify(*t);
        EXPECT_GT(c.nan, 0) << name << " " << dtype_name(dt);
        EXPECT_GT(c.inf, 0) << name << " " << dtype_name(dt);
        EXPECT_GT(c.neg_zero, 0) << name << " " << dtype_name(dt);
        EXPECT_GT(c.subnormal, 0) << name << " " << dtype_name(dt);
        EXPECT_GT(c.normal, 0) << name << " " << dtype_name(dt);
      }
    }
  }
}

TEST(Generators, StridedViewsGetTheSameValues) {
  // Q, K, V as slices of a packed [b, s, 3 * h, d] tensor and dO transposed in storage.
  const Problem p = make(DType::fp16, 2, 3, 3, 10, 10, 8);
  for (const std::string& name : distribution_names()) {
    const Distribution d = *parse_distribution(name);
    HostTensor packed(p.dtype, {2, 10, 9, 8});
        const Shape st = packed.strides();
    HostTensor storage_t(p.dtype, {2, 3, 10, 8});  // dO stored as [b, h, s, d]
    Inputs io{packed.view(p.q_shape(), st, 0), packed.view(p.kv_shape(), st, 3 * 8),
              packed.view(p.kv_shape(), st, 6 * 8),
              storage_t.view(p.q_shape(), {240, 8, 80, 1}, 0)};
    ASSERT_FALSE(io.dout.is_contiguous());
    fill_inputs(p, d, 77, io);
    const Inputs ref = generate_inputs(p, d, 77);
    EXPECT_EQ(hash_inputs(io), hash_inputs(ref)) << name;
  }
  // A tensor of the wrong shape or dtype is rejected.
  Inputs bad = generate_inputs(p, {}, 1);
  bad.v = HostTensor(DType::bf16, p.kv_shape());
  EXPECT_THROW(fill_inputs(p, {}, 1, bad), std::invalid_argument);
  HostTensor t(DType::fp16, {2, 2, 2, 2});
  EXPECT_THROW(fill(t, {Kind::dominant_key, 0}, 1), std::invalid_argument);
}

TEST(Generators, TinyAndOddShapes) {
  for (const std::string& name : distribution_names()) {
    for (const Problem& p : {make(DType::fp16, 1, 1, 1, 1, 1, 1),
                             make(DType::bf16, 3, 6, 2, 5, 1, 3),
                             make(DType::fp32, 1, 2, 1, 1, 17, 256)}) {
      const Inputs in = generate_inputs(p, *parse_distribution(name), 3);
      EXPECT_EQ(in.v.shape(), p.kv_shape());
    }
  }
  EXPECT_THROW(generate_inputs(make(DType::fp16, 1, 3, 2, 1, 1, 8), {}, 1),
               std::invalid_argument);
}

}  // namespace
}  // namespace flashproof
