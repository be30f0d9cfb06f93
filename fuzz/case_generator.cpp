#include "fuzz/case_generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/kv_cache.h"
#include "core/rng.h"

namespace flashproof::fuzz {
namespace {

// Stream ids under derive(seed, index): the shape and kind choices, and the inputs' seed.
constexpr std::uint64_t kShapeStream = 1, kInputStream = 2, kScoreModStream = 3;

const std::int64_t kTileEdges[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512};
const std::int64_t kHeadDimEdges[] = {1, 8, 16, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 160, 192, 224, 255, 256};

std::int64_t pick(Rng& r, std::int64_t lo, std::int64_t hi) {  // uniform in [lo, hi]
  return lo + static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

// Log-uniform in [1, max] (short and long sequences alike), a third of the time a tile edge.
std::int64_t seqlen(Rng& r, std::int64_t max) {
  if (r.below(3) == 0) {
    std::int64_t edge = kTileEdges[r.below(std::size(kTileEdges))];
    return std::min(edge, max);
  }
  const double x = std::exp(r.uniform() * std::log(static_cast<double>(max) + 1));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(x), 1, max);
}

std::int64_t head_dim(Rng& r) {
  return r.below(3) == 0 ? kHeadDimEdges[r.below(std::size(kHeadDimEdges))] : pick(r, 1, 256);
}

// 10^e with e uniform in [lo, hi], written with 3 significant digits: the distribution's
// parameter is the value of that text, wherever it is parsed.
std::string log_uniform(Rng& r, double lo, double hi) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", std::pow(10.0, lo + (hi - lo) * r.uniform()));
  return text;
}

struct Kind {
  const char* name;
  int weight;
};
// Extreme values get most of the weight; plain normal inputs keep a share as the baseline.
constexpr Kind kKinds[] = {{"normal", 6},       {"extreme-logits", 6},    {"near-dtype-max", 2},
                           {"dominant-key", 2}, {"equal-rows", 1},        {"max-in-last-block", 2},
                           {"masked-rows", 2},  {"subnormal", 1}};

// The production profile's kinds (docs/fuzz.md, "Production profile"): the long sequences get the
// most weight; the index and grid limits, ragged tails and long rescaling chains each come often
// enough that a campaign of a dozen cases meets most of them.
constexpr Kind kProductionKinds[] = {{"long-context", 3}, {"long-kv", 3},     {"index-limit", 2},
                                     {"many-heads", 2},   {"ragged-tail", 2}, {"accumulated-rounding", 2},
                                     {"decode-cache", 2}};

template <std::size_t N>
std::string pick_kind(Rng& r, const Kind (&kinds)[N]) {
  int total = 0;
  for (const Kind& k : kinds) total += k.weight;
  int x = static_cast<int>(r.below(static_cast<std::uint64_t>(total)));
  for (const Kind& k : kinds) {
    if (x < k.weight) return k.name;
    x -= k.weight;
  }
  return kinds[0].name;
}

std::string distribution_for(Rng& r, const std::string& kind) {
  if (kind == "normal") {
    const std::uint64_t x = r.below(4);
    return x == 0 ? "uniform" : x == 1 ? "scaled:" + std::to_string(pick(r, 2, 8)) : "normal";
  }
  // Scaled logits' spread from 10 to 1e22: the valid domain (docs/spec.md) ends near 1.8e19, the rest is classified
  // out of domain by the check.
  if (kind == "extreme-logits") return "large-logits:" + log_uniform(r, 1, 22);
  // N(0,1) * 2^10..2^14: the tails reach the fp16 maximum (values are clamped to it); half of
  // these cases get a softmax scale that keeps the logits moderate (generate_case).
  if (kind == "near-dtype-max") return "scaled:" + std::to_string(1 << pick(r, 10, 14));
  if (kind == "max-in-last-block") return "growing-max:" + std::to_string(pick(r, 2, 64));
  if (kind == "masked-rows") return "normal";
  return kind;  // dominant-key, equal-rows, subnormal
}

// ---- the production profile ----

const std::int64_t kModelHeadDims[] = {64, 80, 96, 128, 256};
// Around 2^15 and 2^16: a 16-bit index (signed or not) of a key wraps at one of them.
const std::int64_t kIndexLimits[] = {32767, 32768, 32769, 65535, 65536, 65537};

std::int64_t q_elements(const Problem& p) { return p.batch * p.seqlen_q * p.heads_q * p.head_dim; }
std::int64_t kv_elements(const Problem& p) { return p.batch * p.seqlen_k * p.heads_kv * p.head_dim; }
std::int64_t all_rows_work(const Problem& p) { return p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * p.head_dim; }

// Log-uniform in [lo, hi] (both powers of two), a third of the time a power of two, the lengths
// models are trained and served at.
std::int64_t long_seqlen(Rng& r, std::int64_t lo, std::int64_t hi) {
  if (r.below(3) == 0) {
    std::uint64_t steps = 0;
    while ((lo << (steps + 1)) <= hi) ++steps;
    return lo << r.below(steps + 1);
  }
  const double x = std::exp(std::log(static_cast<double>(lo)) +
                            r.uniform() * (std::log(static_cast<double>(hi)) - std::log(static_cast<double>(lo))));
  return std::clamp<std::int64_t>(std::llround(x), lo, hi);
}

// 1, 2, 4 or 8 K/V heads, groups of 1, 2, 4 or 8 (MHA, GQA, MQA as models ship them), a quarter of
// the cases with two batch entries.
void model_heads(Rng& r, Problem& p) {
  p.heads_kv = std::int64_t{1} << r.below(4);
  p.heads_q = p.heads_kv << r.below(4);
  p.batch = r.below(4) == 0 ? 2 : 1;
}

// None, causal, or a sliding window of 4096 (Mistral's) or 1024 keys back and none ahead.
void model_mask(Rng& r, Problem& p) {
  const std::uint64_t m = r.below(3);
  if (m == 1) p.window_left = -1, p.window_right = 0;
  if (m == 2) p.window_left = r.below(2) == 0 ? 4096 : 1024, p.window_right = 0;
}

// Mostly N(0, 1), as activations are; a fifth uniform or scaled for other logit spreads.
std::string model_values(Rng& r) {
  const std::uint64_t x = r.below(10);
  return x == 0 ? "uniform" : x == 1 ? "scaled:" + std::to_string(pick(r, 2, 8)) : "normal";
}

// Within kProductionMaxElements per tensor: the second batch entry goes, then group members, then
// K/V heads with their groups; the sequence lengths, each kind's point, stay. One head of 256 at
// 131072 is 2^25, so this always ends within the cap.
void fit_elements(Problem& p) {
  while (q_elements(p) > kProductionMaxElements || kv_elements(p) > kProductionMaxElements) {
    if (p.batch > 1) {
      p.batch = 1;
    } else if (q_elements(p) > kProductionMaxElements && p.heads_q > p.heads_kv) {
      p.heads_q /= 2;
    } else if (p.heads_kv > 1) {
      p.heads_kv /= 2, p.heads_q /= 2;
    } else {
      break;
    }
  }
}

// Whether the case runs the backward. A sampled check still pays the backward's all-rows pass
// (dK and dV of key j need P_ij of every row i, so the reference and the baseline compute every
// row wherever the sample has a key column): only seqlen_q x seqlen_k <= 2^28 (implied by the
// work limit from head dim 64 on), with heads shed until that pass is within
// kProductionMaxBackwardWork, else the forward.
bool production_backward(Rng& r, const GeneratorSettings& s, Problem& p, bool kind_allows) {
  const bool want = s.direction == GeneratorSettings::Direction::both ? r.below(2) == 1
                                                                      : s.direction == GeneratorSettings::Direction::backward;
  if (!want || !kind_allows || p.seqlen_q * p.seqlen_k > kProductionMaxBackwardPairs) return false;
  while (all_rows_work(p) > kProductionMaxBackwardWork) {
    if (p.batch > 1) p.batch = 1;
    else if (p.heads_q > p.heads_kv) p.heads_q /= 2;
    else if (p.heads_kv > 1) p.heads_kv /= 2, p.heads_q /= 2;
    else return false;  // one head is still too much (head dim 256 at 2^28 pairs)
  }
  return true;
}

// batch x heads_q in (65535, 131072], each at most 65535: a grid that puts (batch, head) pairs in
// one dimension passes the 65535 limit of gridDim.y and z; either many heads in 2-4 batch
// entries, or many batch entries of 2-64 heads. Head dims 32 and 64, sequences of 1 to 32, or to
// as few as 8 where the element cap needs (2^26 / (2^17 x 64)).
void many_heads(Rng& r, Problem& p) {
  if (r.below(2) == 0) {
    p.batch = pick(r, 2, 4);
    p.heads_q = pick(r, 65535 / p.batch + 1, std::min<std::int64_t>(65535, 131072 / p.batch));
    p.heads_kv = r.below(2) == 0 ? 1 : p.heads_q;  // MQA or MHA (the count is rarely a power of two)
  } else {
    p.heads_q = std::int64_t{2} << r.below(6);  // 2 .. 64
    p.batch = pick(r, 65535 / p.heads_q + 1, std::min<std::int64_t>(65535, 131072 / p.heads_q));
    p.heads_kv = p.heads_q >> r.below(2);  // MHA or groups of 2
  }
  p.head_dim = r.below(2) == 0 ? 32 : 64;
  const std::int64_t longest_q = kProductionMaxElements / (p.batch * p.heads_q * p.head_dim);
  const std::int64_t longest_k = kProductionMaxElements / (p.batch * p.heads_kv * p.head_dim);
  p.seqlen_q = pick(r, 1, std::min<std::int64_t>(32, longest_q));
  p.seqlen_k = pick(r, 1, std::min<std::int64_t>(32, longest_k));
}

// What every case draws first from its shape stream, in this order (the default profile's draws
// are pinned): its kind, then its dtype; and its inputs' seed, from the input stream.
template <std::size_t N>
FuzzCase start_case(const GeneratorSettings& s, std::uint64_t index, const Kind (&kinds)[N], Rng& r) {
  FuzzCase f;
  f.kind = pick_kind(r, kinds);
  f.c.problem.dtype = s.dtypes[r.below(s.dtypes.size())];
  f.c.seed = derive(derive(s.seed, index), kInputStream);
  return f;
}

Rng shape_stream(const GeneratorSettings& s, std::uint64_t index) {
  return Rng(derive(derive(s.seed, index), kShapeStream));
}

// ---- the packed profile ----

// Packed batches (docs/fuzz.md, "Packed profile"): the lengths where packed kernels break. Mixed
// lengths with 0 and 1 among them, one long sequence among many short ones, lengths at the tiles'
// edges, many empty sequences on either side, and the extreme logits of the default profile.
constexpr Kind kPackedKinds[] = {{"packed-mixed", 3},
                                 {"packed-one-long", 2},
                                 {"packed-tile-edges", 2},
                                 {"packed-empty", 1},
                                 {"packed-extreme-logits", 2}};

// One sequence's length for the kind, at most max.
std::int64_t packed_length(Rng& r, const std::string& kind, std::int64_t max, bool long_one) {
  if (long_one) return pick(r, std::max<std::int64_t>(1, max / 2), max);
  if (kind == "packed-one-long") return pick(r, 0, std::min<std::int64_t>(max, 4));
  if (kind == "packed-empty" && r.below(2) == 0) return 0;
  if (kind == "packed-tile-edges") {
    const std::int64_t edges[] = {15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};
    return std::min(max, edges[r.below(std::size(edges))]);
  }
  const std::uint64_t x = r.below(6);
  return x == 0 ? 0 : x == 1 ? 1 : pick(r, 0, max);
}

FuzzCase packed_case(const GeneratorSettings& s, std::uint64_t index) {
  Rng r = shape_stream(s, index);
  FuzzCase f = start_case(s, index, kPackedKinds, r);
  Problem& p = f.c.problem;
  p.head_dim = head_dim(r);
  p.heads_kv = pick(r, 1, 3);
  p.heads_q = p.heads_kv * pick(r, 1, 4);
  const std::int64_t sequences = f.kind == "packed-one-long" ? pick(r, 4, 16) : pick(r, 1, 8);
  const std::int64_t long_at = f.kind == "packed-one-long" ? pick(r, 0, sequences - 1) : -1;
  const bool self_attention = r.below(2) == 0;  // equal query and key lengths, as in training
  std::vector<std::int64_t> len_q, len_k;
  for (std::int64_t b = 0; b < sequences; ++b) {
    len_q.push_back(packed_length(r, f.kind, s.max_seqlen, b == long_at));
    len_k.push_back(self_attention ? len_q.back() : packed_length(r, f.kind, s.max_seqlen, b == long_at));
  }
  const std::uint64_t mask = r.below(3);  // none, causal, local
  if (mask == 1) p.window_left = -1, p.window_right = 0;
  if (mask == 2) {
    p.window_left = r.below(4) == 0 ? -1 : pick(r, 0, 64);
    p.window_right = p.window_left < 0 || r.below(2) == 0 ? pick(r, 0, 64) : -1;
  }
  // Within the work cap (the sum over the sequences): halve the longest sequence, then the heads.
  const auto work = [&] {
    std::int64_t pairs = 0;
    for (std::int64_t b = 0; b < sequences; ++b) pairs += len_q[b] * len_k[b];
    return pairs * p.heads_q * p.head_dim;
  };
  while (work() > s.max_work) {
    if (p.heads_q > 1) {
      p.heads_q /= p.heads_kv, p.heads_kv = 1;
      if (p.heads_q > 1 && work() > s.max_work) p.heads_q = 1;
      continue;
    }
    std::int64_t longest = 0;
    for (std::int64_t b = 1; b < sequences; ++b)
      if (len_q[b] * len_k[b] > len_q[longest] * len_k[longest]) longest = b;
    len_q[longest] /= 2, len_k[longest] /= 2;
  }
  p.batch = 1;
  p.cu_seqlens_q = {0}, p.cu_seqlens_k = {0};
  for (std::int64_t b = 0; b < sequences; ++b) {
    p.cu_seqlens_q.push_back(p.cu_seqlens_q.back() + len_q[b]);
    p.cu_seqlens_k.push_back(p.cu_seqlens_k.back() + len_k[b]);
  }
  // The tensors need a row each side: an all-empty side gets one row in its last sequence.
  if (p.cu_seqlens_q.back() == 0) p.cu_seqlens_q.back() = 1;
  if (p.cu_seqlens_k.back() == 0) p.cu_seqlens_k.back() = 1;
  p.seqlen_q = p.cu_seqlens_q.back(), p.seqlen_k = p.cu_seqlens_k.back();
  f.c.dist = *parse_distribution(f.kind == "packed-extreme-logits" ? "large-logits:" + log_uniform(r, 1, 22)
                                                                     : distribution_for(r, "normal"));
  f.c.impl.clear();
  f.c.backward = s.direction == GeneratorSettings::Direction::both ? r.below(2) == 1
                                                                     : s.direction == GeneratorSettings::Direction::backward;
  return f;
}

// ---- the score-mod profile ----

// The soft cap and ALiBi (docs/fuzz.md, "Score-mod profile"), on a case of the default profile
// (its shapes, masks, GQA and values, the extreme logits included) or of the packed one: small caps
// with logits far past them, the caps models use, the models' slopes, extreme slopes of either
// sign, both together, and both on a packed batch. Drawn from a stream of their own, so that the
// underlying case is the one its profile gives at that index.
constexpr Kind kScoreModKinds[] = {{"softcap-small", 2}, {"softcap-model", 2}, {"alibi-model", 2},
                                   {"alibi-extreme", 1}, {"softcap-alibi", 2}, {"score-mod-packed", 1}};

FuzzCase score_mod_case(const GeneratorSettings& s, std::uint64_t index) {
  Rng r(derive(derive(s.seed, index), kScoreModStream));
  const std::string kind = pick_kind(r, kScoreModKinds);
  GeneratorSettings base = s;
  base.profile = kind == "score-mod-packed" ? Profile::packed : Profile::standard;
  FuzzCase f = generate_case(base, index);
  f.kind = kind;
  Problem& p = f.c.problem;
  const auto cap = [&](double lo, double hi) { p.softcap = static_cast<float>(std::stod(log_uniform(r, lo, hi))); };
  const auto slopes = [&](bool extreme) {
    p.alibi_slopes = standard_alibi_slopes(p.heads_q);
    if (!extreme) return;
    for (float& x : p.alibi_slopes)  // 2^-20 .. 2^6, a quarter of them negative
      x = static_cast<float>(std::exp2(-20.0 + 26.0 * r.uniform()) * (r.below(4) == 0 ? -1 : 1));
  };
  if (kind == "softcap-small") {  // caps 1 to 5 and logits up to 1e22: most far past the cap
    cap(0, std::log10(5.0));
    f.c.dist = *parse_distribution("large-logits:" + log_uniform(r, 1, 22));
  } else if (kind == "softcap-model") {  // Gemma 2's 50 (and 30 for its final logits), Grok's 30
    cap(1, std::log10(50.0));
  } else if (kind == "alibi-model") {
    slopes(false);
  } else if (kind == "alibi-extreme") {
    slopes(true);
  } else {  // softcap-alibi, score-mod-packed: either or both
    const std::uint64_t which = r.below(3);
    if (which != 1) cap(0, std::log10(50.0));
    if (which != 0) slopes(r.below(4) == 0);
  }
  return f;
}

// ---- the decode profile ----

// KV caches (docs/fuzz.md, "Decode profile"): paged and contiguous caches with every sequence's
// used length drawn where decode kernels break (0, 1, a page's and a tile's edges, the capacity),
// shuffled pages shared between sequences, split counts forced from 1 to the key blocks or left to
// the implementation, all-empty caches, extreme logits, and new keys appended before attending
// (over unshared pages: the appended slots NaN until written). One to 16 query tokens, GQA groups up to
// 8 (a decode step packs a group's heads), head dims 64 and 128 mostly. Forward only.
constexpr Kind kDecodeKinds[] = {{"decode-paged", 4}, {"decode-contiguous", 2}, {"decode-splits", 3},
                                 {"decode-empty", 1}, {"decode-extreme-logits", 2}, {"decode-append", 3}};

std::int64_t cache_length(Rng& r, std::int64_t capacity, std::int64_t page) {
  switch (r.below(6)) {
    case 0: return std::min<std::int64_t>(capacity, r.below(2) == 0 ? 0 : 1);  // capacity 0: all appended
    case 1: return std::min(capacity, page * pick(r, 1, std::max<std::int64_t>(1, capacity / page)) + pick(r, -1, 1));
    case 2: return std::min(capacity, 64 * pick(r, 1, std::max<std::int64_t>(1, capacity / 64)) + pick(r, -1, 1));
    case 3: return capacity;
    default: return pick(r, 0, capacity);
  }
}

FuzzCase decode_case(const GeneratorSettings& s, std::uint64_t index) {
  Rng r = shape_stream(s, index);
  FuzzCase f = start_case(s, index, kDecodeKinds, r);
  Problem& p = f.c.problem;
  p.head_dim = r.below(4) == 0 ? head_dim(r) : (r.below(2) == 0 ? 64 : 128);
  p.heads_kv = pick(r, 1, 2);
  p.heads_q = p.heads_kv * (std::int64_t{1} << r.below(4));
  p.batch = pick(r, 1, 4);
  p.seqlen_q = r.below(2) == 0 ? 1 : pick(r, 2, 16);
  const bool paged = f.kind == "decode-paged" || (f.kind != "decode-contiguous" && r.below(2) == 0);
  const std::int64_t page = paged ? 16 * (std::int64_t{1} << r.below(5)) * (r.below(4) == 0 ? 3 : 1) : 16;
  const std::int64_t page_size = std::min<std::int64_t>(page, Problem::max_page_size);
  const std::int64_t max_capacity = std::max(page_size, s.max_seqlen / page_size * page_size);
  p.seqlen_k = page_size * pick(r, 1, max_capacity / page_size);
  const bool append = f.kind == "decode-append";
  // The appended keys: as many as the query rows mostly (a decode or a speculative step), at most
  // the capacity; the stored lengths drawn below what is left, at page and tile edges too.
  if (append) p.seqlen_new = std::min(p.seqlen_k, r.below(3) == 0 ? pick(r, 1, 16) : p.seqlen_q);
  for (std::int64_t b = 0; b < p.batch; ++b)
    p.cache_seqlens.push_back(f.kind == "decode-empty" && r.below(3) != 0 ? 0
                                                                         : cache_length(r, p.seqlen_k - p.seqlen_new, page_size));
  if (paged) {
    p.page_size = page_size;
    const std::int64_t entries = p.batch * (p.seqlen_k / page_size);
    const bool shared = !append && r.below(3) == 0;  // pages receiving appended keys are not shared
    p.num_pages = shared ? std::max<std::int64_t>(1, entries / 2) : entries + pick(r, 0, 4);  // shared, or spare
    p.block_table = page_table(p.batch, p.seqlen_k / page_size, p.num_pages, r.below(4) == 0 ? 0 : 1 + r.below(1u << 30));
  }
  const std::int64_t blocks = (p.seqlen_k + 15) / 16;
  if (f.kind == "decode-splits" || r.below(3) == 0) p.num_splits = pick(r, 1, std::min<std::int64_t>(Problem::max_splits, blocks));
  const std::uint64_t mask = r.below(3);  // none, causal (a decode step's usual mask), local
  if (mask == 1) p.window_left = -1, p.window_right = 0;
  if (mask == 2) p.window_left = pick(r, 0, 256), p.window_right = 0;
  f.c.dist = *parse_distribution(f.kind == "decode-extreme-logits" ? "large-logits:" + log_uniform(r, 1, 22) : "normal");
  f.c.impl.clear();
  f.c.backward = false;
  return f;
}

FuzzCase production_case(const GeneratorSettings& s, std::uint64_t index) {
  Rng r = shape_stream(s, index);
  FuzzCase f = start_case(s, index, kProductionKinds, r);
  Problem& p = f.c.problem;
  std::string values;
  bool backward_allowed = true;
  if (f.kind == "many-heads") {
    many_heads(r, p);
  } else {
    p.head_dim = kModelHeadDims[r.below(std::size(kModelHeadDims))];
    model_heads(r, p);
    if (f.kind == "long-context") {  // prefill of a long prompt
      p.seqlen_q = p.seqlen_k = long_seqlen(r, 16384, 131072);
    } else if (f.kind == "long-kv") {  // decode (one query) or a short chunk against a long KV cache
      p.seqlen_q = r.below(3) == 0 ? 1 : pick(r, 2, 64);
      p.seqlen_k = long_seqlen(r, 16384, 131072);
    } else if (f.kind == "index-limit") {
      p.seqlen_q = pick(r, 1, 64);
      p.seqlen_k = kIndexLimits[r.below(std::size(kIndexLimits))];
    } else if (f.kind == "ragged-tail") {  // 128 k + 1: the last tile of every tile size holds one row or key
      p.seqlen_q = 128 * pick(r, 32, 255) + 1;
      p.seqlen_k = r.below(2) == 0 ? p.seqlen_q : 128 * pick(r, 32, 255) + 1;
    } else if (f.kind == "decode-cache") {  // a decode step against long KV caches (docs/spec.md "KV caches")
      p.seqlen_q = r.below(2) == 0 ? 1 : pick(r, 2, 16);
      p.seqlen_k = long_seqlen(r, 16384, 131072);
      p.batch = pick(r, 1, 4);
      backward_allowed = false;
    } else {  // accumulated-rounding: hundreds of key blocks, each rescaling the running sums
      p.seqlen_k = long_seqlen(r, 16384, 65536);
      p.seqlen_q = r.below(2) == 0 ? p.seqlen_k : pick(r, 1, 64);
      // Half with the row maximum rising in every key block (growing-max), so that every block
      // rescales; the forward alone, where those rescalings accumulate.
      values = r.below(2) == 0 ? "normal" : "growing-max:" + std::to_string(2 << r.below(9));
      backward_allowed = false;
    }
    fit_elements(p);
    if (f.kind == "decode-cache") {  // the capacity a multiple of the page; used lengths up to it
      const std::int64_t page = r.below(2) == 0 ? 16 : 256;
      p.seqlen_k = std::max(page, p.seqlen_k / page * page);
      if (r.below(3) == 0) p.seqlen_new = std::min(p.seqlen_q, p.seqlen_k);  // the step's new tokens appended
      for (std::int64_t b = 0; b < p.batch; ++b) p.cache_seqlens.push_back(cache_length(r, p.seqlen_k - p.seqlen_new, page));
      if (r.below(4) != 0) {
        p.page_size = page;
        p.num_pages = p.batch * (p.seqlen_k / page);
        p.block_table = page_table(p.batch, p.seqlen_k / page, p.num_pages, 1 + r.below(1u << 30));
      }
      if (r.below(2) == 0) p.num_splits = pick(r, 1, Problem::max_splits);
    }
  }
  model_mask(r, p);
  if (values.empty()) values = model_values(r);
  f.c.dist = *parse_distribution(values);
  f.c.impl.clear();
  f.c.backward = production_backward(r, s, p, backward_allowed);
  return f;
}

}  // namespace

const std::vector<std::string>& case_kinds(Profile p) {
  const auto names_of = [](const auto& kinds) {
    std::vector<std::string> v;
    for (const Kind& k : kinds) v.push_back(k.name);
    return v;
  };
  static const std::vector<std::string> standard = names_of(kKinds), production = names_of(kProductionKinds),
                                        packed = names_of(kPackedKinds), score_mod = names_of(kScoreModKinds),
                                        decode = names_of(kDecodeKinds);
  return p == Profile::production ? production : p == Profile::packed ? packed : p == Profile::score_mod ? score_mod
         : p == Profile::decode ? decode : standard;
}

FuzzCase generate_case(const GeneratorSettings& s, std::uint64_t index) {
  if (s.profile == Profile::production) return production_case(s, index);
  if (s.profile == Profile::packed) return packed_case(s, index);
  if (s.profile == Profile::score_mod) return score_mod_case(s, index);
  if (s.profile == Profile::decode) return decode_case(s, index);
  Rng r = shape_stream(s, index);
  FuzzCase f = start_case(s, index, kKinds, r);
  Problem& p = f.c.problem;
  p.seqlen_q = seqlen(r, s.max_seqlen);
  p.seqlen_k = seqlen(r, s.max_seqlen);
  p.head_dim = head_dim(r);
  p.batch = pick(r, 1, 3);
  p.heads_kv = pick(r, 1, 3);
  p.heads_q = p.heads_kv * pick(r, 1, 4);
  const std::uint64_t mask = r.below(3);  // none, causal, local
  if (f.kind == "masked-rows") {
    // Rows that see no key: causal with more queries than keys (bottom-right aligned), or a
    // window that ends before the keys start for the first rows.
    p.seqlen_q = std::max<std::int64_t>(p.seqlen_q, 2);
    p.seqlen_k = pick(r, 1, std::max<std::int64_t>(1, p.seqlen_q - 1));
    p.window_left = r.below(2) == 0 ? -1 : pick(r, 0, 16);
    p.window_right = 0;
  } else if (mask == 1) {
    p.window_left = -1, p.window_right = 0;
  } else if (mask == 2) {
    p.window_left = r.below(4) == 0 ? -1 : pick(r, 0, 64);
    p.window_right = p.window_left < 0 || r.below(2) == 0 ? pick(r, 0, 64) : -1;
  }
  // Within the work cap: one batch entry, one K/V head, a group of 2, then halve the longer
  // sequence (the kind's shape constraint kept: more queries than keys for masked-rows).
  const auto work = [&] { return p.batch * p.heads_q * p.seqlen_q * p.seqlen_k * p.head_dim; };
  while (work() > s.max_work) {
    if (p.batch > 1) {
      p.batch = 1;
    } else if (p.heads_kv > 1) {
      p.heads_q /= p.heads_kv, p.heads_kv = 1;
    } else if (p.heads_q > 2) {
      p.heads_q = 2;
    } else if (p.seqlen_q >= p.seqlen_k && p.seqlen_q > 1) {
      p.seqlen_q = (p.seqlen_q + 1) / 2;
      if (f.kind == "masked-rows") p.seqlen_k = std::max<std::int64_t>(1, std::min(p.seqlen_k, p.seqlen_q - 1));
    } else if (p.seqlen_k > 1) {
      p.seqlen_k = (p.seqlen_k + 1) / 2;
    } else if (p.head_dim > 1) {
      p.head_dim = (p.head_dim + 1) / 2;
    } else {
      break;
    }
  }
  f.c.dist = *parse_distribution(distribution_for(r, f.kind));
  f.c.impl.clear();
  f.c.backward = s.direction == GeneratorSettings::Direction::both ? r.below(2) == 1
                                                                     : s.direction == GeneratorSettings::Direction::backward;
  // Half of the near-dtype-max cases keep their logits moderate: with every input scaled by s, a
  // softmax scale of 1 / (sqrt(d) s^2) brings q.k back to about N(0, 1), while dO . v (dO is not
  // scaled) still reaches past fp16's maximum, and with it the backward's dP and dS. At the default
  // scale those logits are huge too, P is nearly one-hot, and dS = P (dP - D) stays small. Drawn
  // last, so the other choices of every case are those of earlier versions.
  if (f.kind == "near-dtype-max" && r.below(2) == 0) {
    const double s_in = effective_param(f.c.dist);
    p.scale = static_cast<float>(1 / (std::sqrt(static_cast<double>(p.head_dim)) * s_in * s_in));
  }
  return f;
}

}  // namespace flashproof::fuzz
