#include "properties/generators.h"

#include <algorithm>
#include <cmath>

namespace flashproof::properties {
namespace {

// Sizes right at and around the tile sizes in use (kernels/algo/tile_configs.h), and 1.
const std::vector<std::int64_t> kBoundarySeqlens = {1,  2,  15,  16,  17,  31,  32,  33,  63,  64,
                                                    65, 127, 128, 129, 191, 192, 193, 255, 256, 257};
const std::vector<std::int64_t> kBoundaryHeadDims = {1,  2,   8,   16,  31,  32,  33,  59,  64,  65,  72,
                                                     96, 100, 127, 128, 129, 160, 192, 224, 255, 256};

rc::Gen<std::int64_t> gen_seqlen(std::int64_t min, std::int64_t max) {
  std::vector<std::int64_t> boundary;
  for (std::int64_t s : kBoundarySeqlens)
    if (s >= min && s <= max) boundary.push_back(s);
  if (boundary.empty()) boundary.push_back(min);
  return rc::gen::oneOf(rc::gen::inRange<std::int64_t>(min, std::max(min, std::min<std::int64_t>(max, 20)) + 1),
                        rc::gen::elementOf(boundary), rc::gen::inRange<std::int64_t>(min, max + 1));
}

rc::Gen<std::int64_t> gen_head_dim() {
  return rc::gen::oneOf(rc::gen::elementOf(kBoundaryHeadDims), rc::gen::inRange<std::int64_t>(1, 257));
}

struct MaskSpec {
  std::int64_t left, right;
};

rc::Gen<MaskSpec> gen_mask(MaskChoice choice) {
  const auto side = rc::gen::oneOf(rc::gen::just<std::int64_t>(-1), rc::gen::inRange<std::int64_t>(0, 8),
                                   rc::gen::inRange<std::int64_t>(0, 200));
  const auto causal = rc::gen::just(MaskSpec{-1, 0});
  const auto local = rc::gen::map(rc::gen::pair(side, side), [](const std::pair<std::int64_t, std::int64_t>& w) {
    // Both sides unbounded is no mask; make the window bounded on the right then.
    return MaskSpec{w.first, w.first < 0 && w.second < 0 ? 0 : w.second};
  });
  switch (choice) {
    case MaskChoice::none: return rc::gen::just(MaskSpec{-1, -1});
    case MaskChoice::masked: return rc::gen::oneOf(causal, local);
    case MaskChoice::local: return local;
    case MaskChoice::any: break;
  }
  return rc::gen::oneOf(rc::gen::just(MaskSpec{-1, -1}), causal, local);
}

// Mostly normal inputs; the others of core/generators.h, extreme logits log-uniform from 1e1 to
// 1e18 (the valid input domain, docs/spec.md, ends at scaled logits of 2^64, about 1.8e19).
rc::Gen<std::string> gen_distribution() {
  return rc::gen::weightedOneOf<std::string>({
      {8, rc::gen::just<std::string>("normal")},
      {1, rc::gen::just<std::string>("uniform")},
      {1, rc::gen::map(rc::gen::inRange(2, 9), [](int f) { return "scaled:" + std::to_string(f); })},
      {3, rc::gen::map(rc::gen::inRange(1, 19), [](int e) { return "large-logits:1e" + std::to_string(e); })},
      {1, rc::gen::just<std::string>("dominant-key")},
      {1, rc::gen::just<std::string>("equal-rows")},
      {1, rc::gen::map(rc::gen::inRange(2, 65), [](int g) { return "growing-max:" + std::to_string(g); })},
      {1, rc::gen::just<std::string>("subnormal")},
  });
}

}  // namespace

GenLimits limits_for(const AttentionImpl& impl, bool backward) {
  GenLimits limits;
  limits.backward = backward;
  if (impl.where() != "host") {
    limits.max_seqlen = 160;
    limits.max_work = std::int64_t{1} << 20;
  }
  for (DType t : {DType::fp16, DType::bf16, DType::fp32}) {
    Problem p;
    p.dtype = t;
    fit_to_support(p, impl.declared_support());  // a dtype is asked about on a shape it declares
    if (refusal(impl, p, backward).empty()) limits.dtypes.push_back(t);
  }
  return limits;
}

rc::Gen<Case> gen_case(const AttentionImpl& impl, const GenLimits& limits, MaskChoice mask) {
  const std::string name = impl.name();
  const std::vector<DType> dtypes = limits.dtypes.empty() ? std::vector<DType>{DType::fp16} : limits.dtypes;
  const auto seqlen = gen_seqlen(limits.min_seqlen, limits.max_seqlen);
  const std::int64_t min_k = std::max(limits.min_seqlen, limits.min_seqlen_k);
  const auto seqlen_k =
      limits.min_seqlen_k > 0 ? gen_seqlen(min_k, std::max(limits.max_seqlen, limits.min_seqlen_k + 100)) : seqlen;
  const auto shape = rc::gen::tuple(seqlen, seqlen_k, gen_head_dim(),
                                    rc::gen::inRange<std::int64_t>(1, 3), rc::gen::elementOf(std::vector<std::int64_t>{1, 2, 3, 4}),
                                    rc::gen::inRange<std::int64_t>(1, 3));
  return rc::gen::apply(
      [name, limits, min_k](std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t> s,
                     MaskSpec m, DType dtype, const std::string& dist, std::uint64_t seed) {
        Case c;
        Problem& p = c.problem;
        std::tie(p.seqlen_q, p.seqlen_k, p.head_dim, p.heads_kv, p.heads_q, p.batch) = s;
        p.heads_q *= p.heads_kv;  // the generated value is the group size
        p.dtype = dtype;
        p.window_left = m.left;
        p.window_right = m.right;
        // Keep the work within the budget: one batch entry, one K/V head (the group size kept),
        // a group of at most 2, then halve the longer sequence. Every step shrinks the work.
        const auto work = [&] { return p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * p.head_dim; };
        while (work() > limits.max_work) {
          const std::int64_t group = p.heads_q / p.heads_kv;
          if (p.batch > 1) {
            p.batch = 1;
          } else if (p.heads_kv > 1) {
            p.heads_kv = 1, p.heads_q = group;
          } else if (group > 2) {
            p.heads_q = 2;
          } else if (p.seqlen_q >= p.seqlen_k && p.seqlen_q > limits.min_seqlen) {
            p.seqlen_q = std::max(limits.min_seqlen, (p.seqlen_q + 1) / 2);
          } else if (p.seqlen_k > min_k) {
            p.seqlen_k = std::max(min_k, (p.seqlen_k + 1) / 2);
          } else if (p.seqlen_q > limits.min_seqlen) {  // seqlen_k held at min_seqlen_k
            p.seqlen_q = std::max(limits.min_seqlen, (p.seqlen_q + 1) / 2);
          } else {
            break;  // one row, one key: as small as it gets
          }
        }
        c.dist = *parse_distribution(dist);
        c.seed = seed;
        c.impl = name;
        c.backward = limits.backward;
        return c;
      },
      shape, gen_mask(mask), rc::gen::elementOf(dtypes), gen_distribution(), rc::gen::inRange<std::uint64_t>(0, 1u << 30));
}

std::vector<std::string> case_tags(const Case& c) {
  const Problem& p = c.problem;
  const char* mask = !p.has_mask() ? "no mask" : p.causal() ? "causal" : "local";
  const char* gqa = p.heads_q == p.heads_kv ? "MHA" : p.heads_kv == 1 ? "MQA" : "GQA";
  const char* order = p.seqlen_q == p.seqlen_k ? "sq = sk" : p.seqlen_q < p.seqlen_k ? "sq < sk" : "sq > sk";
  const std::string dist = distribution_name(c.dist);
  return {std::string(dtype_name(p.dtype)), mask, gqa, order, dist.substr(0, dist.find(':'))};
}

Case with_score_mod(const AttentionImpl& impl, const Case& c) {
  Case m = c;
  Problem& p = m.problem;
  const Support s = impl.declared_support();
  std::uint64_t x = c.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  const auto next = [&] {  // splitmix64
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const auto uniform = [&] { return static_cast<double>(next() >> 11) * 0x1p-53; };
  if (s.softcap && (!s.alibi || next() % 3 != 0)) p.softcap = static_cast<float>(std::pow(50.0, uniform()));
  if (s.alibi && (!p.softcap || next() % 2 == 0)) {
    p.alibi_slopes = standard_alibi_slopes(p.heads_q);
    if (next() % 4 == 0)
      for (float& slope : p.alibi_slopes)
        slope = static_cast<float>(std::exp2(-20.0 + 26.0 * uniform()) * (next() % 4 == 0 ? -1 : 1));
  }
  return m;
}

}  // namespace flashproof::properties

namespace flashproof {

void showValue(const Case& c, std::ostream& os) {
  os << c.impl << " " << c.problem.describe() << " dist=" << distribution_name(c.dist) << " seed=" << c.seed
     << (c.backward ? " forward+backward" : " forward");
}


}  // namespace flashproof
