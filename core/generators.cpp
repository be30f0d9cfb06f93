#include "core/generators.h"
#include "core/kv_cache.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/parallel.h"
#include "core/rng.h"

namespace flashproof {
namespace {

using Kind = Distribution::Kind;

struct KindInfo {
  Kind kind;
  const char* name;
  double default_param;  // 0: takes no param
};
constexpr std::array<KindInfo, 10> kKinds{{
    {Kind::normal, "normal", 0},
    {Kind::uniform, "uniform", 0},
    {Kind::scaled, "scaled", 4},
    {Kind::large_logits, "large-logits", 1e3},
    {Kind::dominant_key, "dominant-key", 0},
    {Kind::equal_rows, "equal-rows", 0},
    {Kind::growing_max, "growing-max", 32},
    {Kind::subnormal, "subnormal", 0},
    {Kind::bits, "bits", 0},
    {Kind::special, "special", 0.25},
}};

const KindInfo& info(Kind k) { return kKinds[static_cast<std::size_t>(k)]; }

// Bit layout of a dtype.
struct Layout {
  int mant;                // fraction bits
  std::uint32_t sign;      // sign bit
  std::uint32_t exp_mask;  // exponent field, all ones
  std::uint32_t frac_mask;
};
Layout layout(DType t) {
  const int m = dtype_mantissa_bits(t);
  const int width = 8 * dtype_bytes(t);
  const std::uint32_t sign = 1u << (width - 1);
  const std::uint32_t frac = (1u << m) - 1;
  return {m, sign, (sign - 1) & ~frac, frac};
}

double max_finite(DType t) {
  const Layout l = layout(t);
  return from_bits(t, l.exp_mask - 1);  // exponent field max-1, fraction all ones
}

// Writes x rounded once to t's dtype, saturating at +-max finite (x must not be NaN).
struct Put {
  HostTensor& t;
  double max = max_finite(t.dtype());  // hoisted: writing is the hot loop of generation
  void operator()(std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3,
                  double x) const {
    t.set(i0, i1, i2, i3, std::clamp(x, -max, max));
  }
};

// Calls row(rng, i0, i1, i2) for every row of t, each with its own stream, in parallel for large
// tensors. Rows are independent, so the result does not depend on the thread count.
template <class RowFn>
void for_rows(const HostTensor& t, std::uint64_t seed, RowFn&& row) {
  const Shape& s = t.shape();
  const std::int64_t rows = s[0] * s[1] * s[2];
  const std::int64_t chunk = std::max<std::int64_t>(1, 4096 / s[3]);
  const std::int64_t items = (rows + chunk - 1) / chunk;
  const int threads = t.numel() < (1 << 16) ? 1 : 0;  // threads cost more than small tensors
  parallel_for(
      items,
      [&](std::int64_t item) {
        for (std::int64_t r = item * chunk, end = std::min(rows, r + chunk); r < end; ++r) {
          Rng rng(derive(seed, static_cast<std::uint64_t>(r)));
          row(rng, r / (s[1] * s[2]), r / s[2] % s[1], r % s[2]);
        }
      },
      threads);
}

// Raw bits, with the exponent field forced to 0 or all ones in 1/8 of the elements each (and the
// fraction cleared in a quarter of those), so every class of value shows up often.
std::uint32_t random_bits(std::uint64_t r, const Layout& l) {
  std::uint32_t b = static_cast<std::uint32_t>(r) & (l.sign | l.exp_mask | l.frac_mask);
  const unsigned cls = (r >> 32) & 7;
  if (cls == 0) b &= ~l.exp_mask;
  if (cls == 1) b |= l.exp_mask;
  if (cls <= 1 && ((r >> 35) & 3) == 0) b &= ~l.frac_mask;
  return b;
}

// 3/4 subnormal with a nonzero fraction, else a normal value in the four smallest binades.
std::uint32_t subnormal_bits(std::uint64_t r, const Layout& l) {
  const std::uint32_t sign = (r & 1) ? l.sign : 0;
  if (((r >> 1) & 3) != 3) return sign | static_cast<std::uint32_t>(1 + (r >> 3) % l.frac_mask);
  const std::uint32_t field = static_cast<std::uint32_t>((r >> 3) & 3) + 1;
  return sign | (field << l.mant) | (static_cast<std::uint32_t>(r >> 5) & l.frac_mask);
}

std::uint32_t special_bits(std::uint64_t r, const Layout& l) {
  const std::uint32_t sign = (r >> 63) ? l.sign : 0;
  switch ((r & 0xFFFFFFFF) % 10) {
    case 0: return 0;                                      // +0
    case 1: return l.sign;                                 // -0
    case 2: return l.exp_mask;                             // +inf
    case 3: return l.sign | l.exp_mask;                    // -inf
    case 4: return l.exp_mask | (1u << (l.mant - 1));      // quiet NaN
    case 5: return sign | 1u;                              // min subnormal
    case 6: return sign | l.frac_mask;                     // max subnormal
    case 7: return sign | (1u << l.mant);                  // min normal
    case 8: return l.exp_mask - 1;                         // max finite
    default: return l.sign | (l.exp_mask - 1);             // -max finite
  }
}

void check_tensor(const HostTensor& t, DType dtype, const Shape& shape, const char* name) {
  if (t.empty() || t.dtype() != dtype || t.shape() != shape)
    throw std::invalid_argument(std::string("fill_inputs: ") + name + " must be " +
                                std::string(dtype_name(dtype)) + " of the problem's shape, got " +
                                (t.empty() ? std::string("an empty tensor") : t.describe()));
}

// Per-(b, g) structure stream.
Rng structure_rng(const Problem& p, std::uint64_t seed, std::int64_t b, std::int64_t g) {
  return Rng(derive(derive(seed, static_cast<std::uint64_t>(InputStream::structure)),
                    static_cast<std::uint64_t>(b * p.heads_kv + g)));
}

// Per (b, g): a key index below seqlen_k and a +-1 vector of length head_dim.
struct Direction {
  std::int64_t key;
  std::vector<double> sign;
};
std::vector<Direction> directions(const Problem& p, std::uint64_t seed) {
  std::vector<Direction> out;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t g = 0; g < p.heads_kv; ++g) {
      Rng rng = structure_rng(p, seed, b, g);
      Direction d{static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(p.seqlen_k))),
                  {}};
      for (std::int64_t e = 0; e < p.head_dim; ++e) d.sign.push_back((rng.next() >> 63) ? -1 : 1);
      out.push_back(std::move(d));
    }
  return out;
}

// |scale|, kept away from 0 so that the magnitudes derived from it stay finite.
double abs_scale(const Problem& p) {
  return std::max(std::fabs(static_cast<double>(p.softmax_scale())), 1e-30);
}

}  // namespace

bool is_elementwise(Kind k) {
  return k == Kind::normal || k == Kind::uniform || k == Kind::scaled || k == Kind::subnormal ||
         k == Kind::bits || k == Kind::special;
}

double effective_param(const Distribution& d) {
  return d.param != 0 ? d.param : info(d.kind).default_param;
}

std::optional<Distribution> parse_distribution(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  for (const KindInfo& k : kKinds) {
    if (name != k.name) continue;
    Distribution d{k.kind, 0};
    if (colon == std::string_view::npos) return d;
    if (k.default_param == 0) return std::nullopt;  // this kind takes no param
    const std::string_view num = text.substr(colon + 1);
    const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), d.param);
    if (num.empty() || ec != std::errc() || end != num.data() + num.size()) return std::nullopt;
    if (!std::isfinite(d.param) || d.param <= 0) return std::nullopt;
    if (k.kind == Kind::growing_max && d.param <= 1) return std::nullopt;
    if (k.kind == Kind::special && d.param > 1) return std::nullopt;
    return d;
  }
  return std::nullopt;
}

std::string distribution_name(const Distribution& d) {
  std::string s = info(d.kind).name;
  if (d.param != 0) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, d.param);  // shortest round trip
    s += ':';
    s.append(buf, r.ptr);
  }
  return s;
}

std::vector<std::string> distribution_names() {
  std::vector<std::string> out;
  for (const KindInfo& k : kKinds) out.emplace_back(k.name);
  return out;
}

void fill(HostTensor& t, const Distribution& d, std::uint64_t seed) {
  if (!is_elementwise(d.kind))
    throw std::invalid_argument("fill: distribution " + distribution_name(d) +
                                " needs the problem; use fill_inputs");
  const DType dt = t.dtype();
  const Layout l = layout(dt);
  const double param = effective_param(d);
  const std::int64_t n = t.shape()[3];
  const double max = max_finite(dt);
  const std::int64_t stride = t.strides()[3];
  // One switch per row, and each row's elements addressed from its first (the same values in the
  // same order as element by element; this is the hot loop of input generation).
  for_rows(t, seed, [&](Rng& rng, std::int64_t a, std::int64_t b, std::int64_t c) {
    thread_local std::vector<double> row;  // one row's normal draws
    if (static_cast<std::int64_t>(row.size()) < n) row.resize(static_cast<std::size_t>(n));
    const std::int64_t base = t.element_offset(a, b, c, 0);
    auto value = [&](std::int64_t e, double x) {
      t.set_raw_bits(base + e * stride, to_bits(dt, std::clamp(x, -max, max)));
    };
    auto bits = [&](std::int64_t e, std::uint32_t v) { t.set_raw_bits(base + e * stride, v); };
    switch (d.kind) {
      case Kind::normal:
        rng.fill_normal(row.data(), n);
        for (std::int64_t e = 0; e < n; ++e) value(e, row[e]);
        break;
      case Kind::scaled:
        rng.fill_normal(row.data(), n);
        for (std::int64_t e = 0; e < n; ++e) value(e, row[e] * param);
        break;
      case Kind::uniform:
        for (std::int64_t e = 0; e < n; ++e) {
          const double x = round_to(dt, rng.uniform(-1.0, 1.0));
          t.set_raw_bits(base + e * stride, to_bits(dt, x < 1.0 ? x : 1.0 - unit_roundoff(dt)));
        }
        break;
      case Kind::subnormal:
        for (std::int64_t e = 0; e < n; ++e) bits(e, subnormal_bits(rng.next(), l));
        break;
      case Kind::bits:
        for (std::int64_t e = 0; e < n; ++e) bits(e, random_bits(rng.next(), l));
        break;
      case Kind::special:
        for (std::int64_t e = 0; e < n; ++e) {
          if (rng.uniform() < param)
            bits(e, special_bits(rng.next(), l));
          else
            value(e, rng.normal());
        }
        break;
      default: break;  // excluded above
    }
  });
}

void fill_inputs(const ValidProblem& valid, const Distribution& d, std::uint64_t seed, Inputs& io) {
  const Problem& p = valid;
  if (p.kv_cache())
    throw std::invalid_argument("fill_inputs: a KV-cache problem's inputs are its logical problem's (generate_inputs)");
  check_tensor(io.q, p.dtype, p.q_shape(), "q");
  check_tensor(io.k, p.dtype, p.kv_shape(), "k");
  check_tensor(io.v, p.dtype, p.kv_shape(), "v");
  check_tensor(io.dout, p.dtype, p.q_shape(), "dout");
  auto stream = [&](InputStream s) { return derive(seed, static_cast<std::uint64_t>(s)); };

  const Distribution normal{Kind::normal, 0};
  const bool raw = d.kind == Kind::bits || d.kind == Kind::special;
  fill(io.dout, raw ? d : normal, stream(InputStream::dout));
  if (is_elementwise(d.kind)) {
    fill(io.q, d, stream(InputStream::q));
    fill(io.k, d, stream(InputStream::k));
    fill(io.v, d, stream(InputStream::v));
    return;
  }
  fill(io.v, normal, stream(InputStream::v));

  const double scale = abs_scale(p);
  const double sign = p.softmax_scale() < 0 ? -1 : 1;  // Q follows the scale's sign: logits > 0
  const double dim = static_cast<double>(p.head_dim);
  const std::int64_t D = p.head_dim;
  const Put put_q{io.q}, put_k{io.k};
  if (d.kind == Kind::large_logits) {
    const double factor = std::sqrt(effective_param(d) / (scale * std::sqrt(dim)));
    fill(io.q, {Kind::scaled, factor}, stream(InputStream::q));
    fill(io.k, {Kind::scaled, factor}, stream(InputStream::k));
    return;
  }
  if (d.kind == Kind::equal_rows) {
    fill(io.q, normal, stream(InputStream::q));
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t g = 0; g < p.heads_kv; ++g) {
        Rng rng = structure_rng(p, seed, b, g);
        std::vector<double> r(static_cast<std::size_t>(D));
        for (double& x : r) x = rng.normal();
        for (std::int64_t j = 0; j < p.seqlen_k; ++j)
          for (std::int64_t e = 0; e < D; ++e) put_k(b, j, g, e, r[e]);
      }
    return;
  }

  // dominant_key and growing_max: a +-1 direction per (b, g) shared by Q and K.
  const std::vector<Direction> dirs = directions(p, seed);
  auto dir = [&](std::int64_t b, std::int64_t h_kv) -> const Direction& {
    return dirs[static_cast<std::size_t>(b * p.heads_kv + h_kv)];
  };
  if (d.kind == Kind::dominant_key) {
    constexpr double kLogit = 40, kKey = 8;
    const double a = kLogit / (kKey * scale * dim);
    const double noise = 0.5 / (scale * std::sqrt(dim));
    for_rows(io.q, stream(InputStream::q), [&](Rng& rng, std::int64_t b, std::int64_t i,
                                                std::int64_t h) {
      const Direction& s = dir(b, p.kv_head(h));
      const double ai = sign * a * (1 + rng.uniform());
      for (std::int64_t e = 0; e < D; ++e) {
        const double base = ai * s.sign[e];
        put_q(b, i, h, e, base + noise * rng.normal());
      }
    });
    fill(io.k, normal, stream(InputStream::k));
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t g = 0; g < p.heads_kv; ++g)
        for (std::int64_t e = 0; e < D; ++e)
          put_k(b, dir(b, g).key, g, e, kKey * dir(b, g).sign[e]);
    return;
  }
  if (d.kind == Kind::growing_max) {
    const double steps = static_cast<double>(std::max<std::int64_t>(1, p.seqlen_k - 1));
    const double gamma = (effective_param(d) - 1) / steps;
    for_rows(io.q, stream(InputStream::q), [&](Rng& rng, std::int64_t b, std::int64_t i,
                                                std::int64_t h) {
      const Direction& s = dir(b, p.kv_head(h));
      const double bi = sign * (1 + rng.uniform()) / (scale * dim);
      for (std::int64_t e = 0; e < D; ++e) put_q(b, i, h, e, bi * s.sign[e]);
    });
    for (std::int64_t b = 0; b < p.batch; ++b)
      for (std::int64_t j = 0; j < p.seqlen_k; ++j)
        for (std::int64_t g = 0; g < p.heads_kv; ++g) {
          const double m = 1 + static_cast<double>(j) * gamma;
          for (std::int64_t e = 0; e < D; ++e) put_k(b, j, g, e, m * dir(b, g).sign[e]);
        }
    return;
  }
}

Inputs generate_inputs(const ValidProblem& valid, const Distribution& d, std::uint64_t seed) {
  const Problem& p = valid;
  if (p.kv_cache()) {  // the logical problem's inputs, stored in the cache and read back from it
    const Inputs in = generate_inputs(ValidProblem(logical_problem(p)), d, seed);
    return cache_problem_inputs(valid, in.q, in.dout, cache_inputs(valid, in.k, in.v));
  }
  Inputs in{HostTensor(p.dtype, p.q_shape()), HostTensor(p.dtype, p.kv_shape()),
            HostTensor(p.dtype, p.kv_shape()), HostTensor(p.dtype, p.q_shape())};
  fill_inputs(valid, d, seed, in);
  return in;
}

Inputs cache_problem_inputs(const ValidProblem& valid, HostTensor q, HostTensor dout, const KvCacheInputs& cache) {
  const Problem& p = valid;
  // The keys attended over: the cache's (shared pages hold one sequence's), the appended ones after.
  HostTensor k = cache.k, v = cache.v;
  if (p.appends()) {
    k = k.contiguous_copy(), v = v.contiguous_copy();
    append_to_cache(p, cache.k_new, cache.v_new, k, v);
  }
  return {std::move(q), logical_keys(valid, k), logical_keys(valid, v), std::move(dout),
          std::make_shared<KvCacheInputs>(cache)};
}

void read_kv_rows(const Inputs& in, std::int64_t b, std::int64_t kv_head, std::vector<double>& keys,
                  std::vector<double>& values) {
  const std::int64_t sk = in.k.shape()[1], d = in.k.shape()[3];
  keys.assign(static_cast<std::size_t>(sk * d), 0), values.assign(static_cast<std::size_t>(sk * d), 0);
  for (std::int64_t j = 0; j < sk; ++j) {
    in.k.read_row(b, j, kv_head, keys.data() + j * d);
    in.v.read_row(b, j, kv_head, values.data() + j * d);
  }
}

}  // namespace flashproof
