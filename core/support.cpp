#include "core/support.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace flashproof {
namespace {

enum class MaskKind { none, causal, window };

MaskKind mask_kind(const Problem& p) {
  if (!p.has_mask()) return MaskKind::none;
  return p.causal() ? MaskKind::causal : MaskKind::window;
}

bool allows(const Support& s, MaskKind k) {
  return k == MaskKind::none ? s.unmasked : k == MaskKind::causal ? s.causal : s.windows;
}

const char* kind_name(MaskKind k) { return k == MaskKind::none ? "no mask" : k == MaskKind::causal ? "causal" : "a local window"; }

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// The length breaks the multiple rule.
bool off_multiple(const Support& s, std::int64_t n) { return n > s.seqlen_free_up_to && n % s.seqlen_multiple != 0; }

std::string length_problem(const Support& s, const char* name, std::int64_t n, std::int64_t max) {
  if (max > 0 && n > max) return std::string(name) + " " + std::to_string(n) + " is above the declared maximum " + std::to_string(max);
  if (off_multiple(s, n))
    return std::string(name) + " " + std::to_string(n) + " is not a multiple of " + std::to_string(s.seqlen_multiple) +
           (s.seqlen_free_up_to > 0 ? " (declared above " + std::to_string(s.seqlen_free_up_to) + ")" : "");
  return {};
}

// n moved into the length rules; unchanged when no length fits.
std::int64_t fit_length(const Support& s, std::int64_t n, std::int64_t max) {
  if (max > 0 && n > max) n = max;
  if (!off_multiple(s, n)) return n;
  const std::int64_t down = n - n % s.seqlen_multiple;
  if (down >= 1) return down;
  const std::int64_t up = s.seqlen_multiple;
  return max > 0 && up > max ? n : up;
}

}  // namespace

std::string validate(const Support& s) {
  if (s.seqlen_multiple < 1) return "seqlen_multiple must be at least 1";
  if (s.paged && !s.kv_cache) return "paged KV caches need kv_cache declared too";
  if (s.kv_append && !s.kv_cache) return "appended keys (kv_append) need kv_cache declared too";
  if (s.seqlen_free_up_to < 0 || s.max_seqlen_q < 0 || s.max_seqlen_k < 0 || s.max_head_dim < 0)
    return "the declared maxima and seqlen_free_up_to must not be negative (0: none)";
  if (!s.unmasked && !s.causal && !s.windows) return "no mask kind is declared (none, causal, window)";
  for (std::int64_t d : s.head_dims)
    if (d < 1 || d > Problem::max_head_dim)
      return "declared head dim " + std::to_string(d) + " is outside [1, " + std::to_string(Problem::max_head_dim) + "]";
  if (s.max_head_dim > 0 && !s.head_dims.empty() && *s.head_dims.begin() > s.max_head_dim)
    return "no declared head dim is within max_head_dim " + std::to_string(s.max_head_dim);
  return {};
}

std::string unsupported_by(const Support& s, const Problem& p, bool backward) {
  if (backward && !s.backward) return "the backward is not declared";
  if (!s.dtypes.empty() && !s.dtypes.contains(p.dtype)) return "dtype " + std::string(dtype_name(p.dtype)) + " is not declared";
  if (!s.head_dims.empty() && !s.head_dims.contains(p.head_dim))
    return "head dim " + std::to_string(p.head_dim) + " is not declared";
  if (s.max_head_dim > 0 && p.head_dim > s.max_head_dim)
    return "head dim " + std::to_string(p.head_dim) + " is above the declared maximum " + std::to_string(s.max_head_dim);
  if (!s.gqa && p.heads_q != p.heads_kv) return "GQA (heads_q != heads_kv) is not declared";
  const MaskKind kind = mask_kind(p);
  if (!allows(s, kind)) return std::string(kind_name(kind)) + " is not declared";
  if (p.packed() && !s.packed) return "packed batches (cu_seqlens_q/k) are not declared";
  if (p.softcap && !s.softcap) return "the soft cap is not declared";
  if (p.alibi() && !s.alibi) return "ALiBi is not declared";
  if (p.kv_cache() && backward) return "a KV-cache problem is forward only";
  if (p.kv_cache() && !s.kv_cache) return "KV caches (cache_seqlens, page_size) are not declared";
  if (p.paged() && !s.paged) return "paged KV caches (page_size, block_table) are not declared";
  if (p.appends() && !s.kv_append) return "appended keys (seqlen_new) are not declared";
  // The length rules, for a packed batch per sequence.
  for (std::int64_t b = 0; b < (p.packed() ? p.sequences() : 1); ++b) {
    const std::int64_t sq = p.packed() ? p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b] : p.seqlen_q;
    const std::int64_t sk = p.packed() ? p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b] : p.seqlen_k;
    const std::string which = p.packed() ? " of sequence " + std::to_string(b) : "";
    if (kind != MaskKind::none && s.alignment == MaskAlignment::top_left && sq != sk)
      return "the declared mask is top-left aligned, which is flashproof's bottom-right mask only where seqlen_q == seqlen_k" +
             which;
    if (std::string e = length_problem(s, "seqlen_q", sq, s.max_seqlen_q); !e.empty()) return e + which;
    if (std::string e = length_problem(s, "seqlen_k", sk, s.max_seqlen_k); !e.empty()) return e + which;
  }
  return {};
}

bool fit_to_support(Problem& p, const Support& s) {
  Problem q = p;
  if (!s.head_dims.empty() && !s.head_dims.contains(q.head_dim)) {
    std::int64_t best = *s.head_dims.begin();
    for (std::int64_t d : s.head_dims)
      if (std::llabs(d - q.head_dim) < std::llabs(best - q.head_dim)) best = d;
    q.head_dim = best;
  }
  if (s.max_head_dim > 0 && q.head_dim > s.max_head_dim) q.head_dim = s.max_head_dim;
  if (!s.gqa) q.heads_q = q.heads_kv;
  if (!s.softcap) q.softcap.reset();
  if (!s.alibi) q.alibi_slopes.clear();
  if (q.alibi()) q.alibi_slopes.resize(static_cast<std::size_t>(q.heads_q));  // the first heads' slopes
  if (!s.kv_cache) {  // every sequence then uses the whole (contiguous) cache
    q.cache_seqlens.clear(), q.block_table.clear();
    q.page_size = q.num_pages = q.num_splits = q.seqlen_new = 0;
  } else if (!s.paged && q.paged()) {  // the same cache, contiguous
    q.block_table.clear();
    q.page_size = q.num_pages = 0;
  }
  if (q.appends() && !s.kv_append) {  // the same keys, already in the cache
    for (std::int64_t& n : q.cache_seqlens) n += q.seqlen_new;
    q.seqlen_new = 0;
  }
  if (!allows(s, mask_kind(q))) {
    // The nearest declared kind: a window becomes causal, then none; causal none, then a window;
    // none causal, then a window.
    const std::vector<MaskKind> order = mask_kind(q) == MaskKind::window ? std::vector{MaskKind::causal, MaskKind::none}
                                        : mask_kind(q) == MaskKind::causal ? std::vector{MaskKind::none, MaskKind::window}
                                                                           : std::vector{MaskKind::causal, MaskKind::window};
    for (MaskKind k : order) {
      if (!allows(s, k)) continue;
      q.window_left = k == MaskKind::window ? 16 : -1;
      q.window_right = k == MaskKind::none ? -1 : 0;
      break;
    }
  }
  if (q.packed() && !s.packed) {  // one dense sequence of the longest lengths
    q.seqlen_q = std::max<std::int64_t>(1, q.max_seqlen_q());
    q.seqlen_k = std::max<std::int64_t>(1, q.max_seqlen_k());
    q.cu_seqlens_q.clear(), q.cu_seqlens_k.clear();
  }
  if (q.packed()) {  // each sequence's lengths, the offsets rebuilt from them
    std::int64_t total_q = 0, total_k = 0;
    for (std::size_t b = 1; b < q.cu_seqlens_q.size(); ++b) {
      std::int64_t sq = p.cu_seqlens_q[b] - p.cu_seqlens_q[b - 1], sk = p.cu_seqlens_k[b] - p.cu_seqlens_k[b - 1];
      if (sq > 0) sq = fit_length(s, sq, s.max_seqlen_q);
      if (sk > 0) sk = fit_length(s, sk, s.max_seqlen_k);
      if (q.has_mask() && s.alignment == MaskAlignment::top_left) sq = sk = std::min(sq, sk);
      q.cu_seqlens_q[b] = total_q += sq;
      q.cu_seqlens_k[b] = total_k += sk;
    }
    q.seqlen_q = total_q, q.seqlen_k = total_k;
  } else if (!q.kv_cache()) {
    q.seqlen_q = fit_length(s, q.seqlen_q, s.max_seqlen_q);
    q.seqlen_k = fit_length(s, q.seqlen_k, s.max_seqlen_k);
    if (q.has_mask() && s.alignment == MaskAlignment::top_left) q.seqlen_q = q.seqlen_k = std::min(q.seqlen_q, q.seqlen_k);
  }
  if (q == p || !q.validate().empty()) return false;
  p = q;
  return true;
}

std::string describe(const Support& s) {
  std::vector<std::string> parts;
  if (!s.dtypes.empty()) {
    std::vector<std::string> names;
    for (DType t : s.dtypes) names.emplace_back(dtype_name(t));
    parts.push_back("dtypes " + join(names, ", "));
  }
  if (!s.head_dims.empty()) {
    std::vector<std::string> dims;
    for (std::int64_t d : s.head_dims) dims.push_back(std::to_string(d));
    parts.push_back("head dims " + join(dims, ", "));
  }
  if (s.max_head_dim > 0) parts.push_back("head dim at most " + std::to_string(s.max_head_dim));
  if (!s.unmasked || !s.causal || !s.windows || s.alignment == MaskAlignment::top_left) {
    std::vector<std::string> masks;
    if (s.unmasked) masks.emplace_back("none");
    if (s.causal) masks.emplace_back("causal");
    if (s.windows) masks.emplace_back("window");
    parts.push_back("masks " + join(masks, ", ") + (s.alignment == MaskAlignment::top_left ? " (top-left)" : ""));
  }
  if (!s.gqa) parts.emplace_back("no GQA");
  if (!s.backward) parts.emplace_back("forward only");
  if (s.seqlen_multiple > 1)
    parts.push_back((s.seqlen_free_up_to > 0 ? "lengths above " + std::to_string(s.seqlen_free_up_to) : std::string("lengths")) +
                    " multiples of " + std::to_string(s.seqlen_multiple));
  if (s.max_seqlen_q > 0) parts.push_back("seqlen_q at most " + std::to_string(s.max_seqlen_q));
  if (s.max_seqlen_k > 0) parts.push_back("seqlen_k at most " + std::to_string(s.max_seqlen_k));
  const bool all_features = s.packed && s.softcap && s.alibi && s.kv_cache && s.paged && s.kv_append,
             no_feature = !s.packed && !s.softcap && !s.alibi && !s.kv_cache && !s.paged && !s.kv_append;
  if (parts.empty() && all_features) return "everything";
  if (parts.empty() && no_feature) return "every dense problem";
  if (s.packed) parts.emplace_back("packed batches");
  if (s.softcap) parts.emplace_back("soft cap");
  if (s.alibi) parts.emplace_back("ALiBi");
  if (s.kv_cache) parts.emplace_back(std::string(s.paged ? "KV caches, paged" : "KV caches") + (s.kv_append ? ", appended keys" : ""));
  return join(parts, "; ");
}

}  // namespace flashproof
