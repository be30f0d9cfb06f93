// Deterministic, portable random numbers: the same seed gives the same sequence on every machine.
// No std::*_distribution is used (their algorithms are implementation-defined).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace flashproof {

// SplitMix64 step (Steele, Lea, Flood 2014): a bijective mixer, used for seeding and streams.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Seed of an independent stream (e.g. per tensor: Q=0, K=1, V=2, dO=3; or per row). Both inputs
// go through the mixer, so nearby seeds and stream ids give unrelated streams.
constexpr std::uint64_t derive(std::uint64_t seed, std::uint64_t stream_id) {
  std::uint64_t s = seed;
  std::uint64_t a = splitmix64(s);
  std::uint64_t t = a ^ (stream_id * 0xD1B54A32D192ED03ull);
  return splitmix64(t);
}

// xoshiro256** (Blackman, Vigna) seeded through SplitMix64.
class Rng {
 public:
  explicit constexpr Rng(std::uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }

  constexpr std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform integer in [0, n), n >= 1 (Lemire's multiply; the bias is below 2^-64 * n).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }

  // Uniform in [0, 1): 53 random bits scaled by 2^-53, exact.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }

  // Uniform in [a, b). Exact (hence portable) when b - a is a power of two, e.g. [-1, 1).
  double uniform(double a, double b) {
    const double w = (b - a) * uniform();  // separate statement: no fused multiply-add contract
    return a + w;
  }

  // Standard normal, Marsaglia polar method. u and v carry 26 random bits each, so u*u + v*v is
  // exact (multiples of 2^-50 below 2) whether or not the compiler fuses it; the only non-IEEE
  // step is std::log, and callers round the result to fp16/bf16/fp32, which absorbs last-bit
  // libm differences in practice. The second value of each pair is kept for the next call.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = static_cast<double>(next() >> 38) * 0x1p-25 - 1.0;  // [-1, 1), step 2^-25
      v = static_cast<double>(next() >> 38) * 0x1p-25 - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

  // out[0..n) = n successive normal() calls, the same values and the same state afterwards. The
  // accepted pairs are drawn first and their logs, square roots and quotients taken afterwards in
  // a separate loop, where the pairs' long-latency steps overlap instead of waiting on each other.
  void fill_normal(double* out, std::int64_t n) {
    std::int64_t i = 0;
    if (n > 0 && has_spare_) {
      has_spare_ = false;
      out[i++] = spare_;
    }
    constexpr int kBatch = 32;
    double u[kBatch], v[kBatch], s[kBatch];
    while (i < n) {
      const int pairs = static_cast<int>(std::min<std::int64_t>(kBatch, (n - i + 1) / 2));
      for (int k = 0; k < pairs; ++k) {
        do {
          u[k] = static_cast<double>(next() >> 38) * 0x1p-25 - 1.0;
          v[k] = static_cast<double>(next() >> 38) * 0x1p-25 - 1.0;
          s[k] = u[k] * u[k] + v[k] * v[k];
        } while (s[k] >= 1.0 || s[k] == 0.0);
      }
      for (int k = 0; k < pairs; ++k) s[k] = std::sqrt(-2.0 * std::log(s[k]) / s[k]);
      for (int k = 0; k < pairs; ++k) {
        out[i++] = u[k] * s[k];
        if (i < n) {
          out[i++] = v[k] * s[k];
        } else {  // odd count: the pair's second value is kept, as normal() keeps it
          spare_ = v[k] * s[k];
          has_spare_ = true;
        }
      }
    }
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4]{};
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace flashproof
