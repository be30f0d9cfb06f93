#include "core/problem.h"
#include "core/appended_pages.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace flashproof {

namespace {
thread_local std::uint64_t validations = 0;

std::string positive_error(const char* name, std::int64_t v) {
  return v >= 1 ? std::string() : std::string(name) + " (" + std::to_string(v) + ") must be >= 1";
}

// One side's offsets: from 0, non-decreasing, ending at the tensor's length.
std::string offsets_error(const char* name, const std::vector<std::int64_t>& cu, const char* length_name,
                          std::int64_t length) {
  const std::string n(name);
  if (cu.size() < 2) return n + " must hold at least 2 offsets (0 and the total length)";
  if (cu.front() != 0) return n + " must start at 0, not " + std::to_string(cu.front());
  for (std::size_t b = 1; b < cu.size(); ++b)
    if (cu[b] < cu[b - 1])
      return n + " must not decrease (offset " + std::to_string(b) + " is " + std::to_string(cu[b]) +
             " after " + std::to_string(cu[b - 1]) + ")";
  if (cu.back() != length)
    return n + " must end at " + length_name + " (" + std::to_string(length) + "), not " +
           std::to_string(cu.back());
  return {};
}

std::string packing_error(const Problem& p) {
  if (p.cu_seqlens_q.empty() && p.cu_seqlens_k.empty()) return {};
  if (p.cu_seqlens_q.empty() || p.cu_seqlens_k.empty())
    return "cu_seqlens_q and cu_seqlens_k must be given together";
  if (p.cu_seqlens_q.size() != p.cu_seqlens_k.size())
    return "cu_seqlens_q (" + std::to_string(p.cu_seqlens_q.size()) + " offsets) and cu_seqlens_k (" +
           std::to_string(p.cu_seqlens_k.size()) + ") must describe as many sequences";
  if (p.batch != 1)
    return "a packed batch is stored as batch 1 (cu_seqlens_q/k give its sequences), not " + std::to_string(p.batch);
  if (auto e = offsets_error("cu_seqlens_q", p.cu_seqlens_q, "seqlen_q", p.seqlen_q); !e.empty()) return e;
  return offsets_error("cu_seqlens_k", p.cu_seqlens_k, "seqlen_k", p.seqlen_k);
}
std::string cache_error(const Problem& p) {
  if (!p.kv_cache()) {
    if (p.num_pages != 0 || !p.block_table.empty()) return "num_pages and block_table need a page_size (a paged KV cache)";
    if (p.num_splits != 0) return "num_splits is for KV-cache problems (cache_seqlens or page_size)";
    if (p.seqlen_new != 0) return "seqlen_new (appended keys) is for KV-cache problems with cache_seqlens";
    return {};
  }
  if (p.packed()) return "a KV cache and a packed batch (cu_seqlens_q/k) cannot be combined";
  if (!p.cache_seqlens.empty()) {
    if (static_cast<std::int64_t>(p.cache_seqlens.size()) != p.batch)
      return "cache_seqlens must hold one length per sequence of the batch (" + std::to_string(p.batch) + "), not " +
             std::to_string(p.cache_seqlens.size());
    for (std::size_t b = 0; b < p.cache_seqlens.size(); ++b)
      if (p.cache_seqlens[b] < 0 || p.cache_seqlens[b] > p.seqlen_k)
        return "cache_seqlens[" + std::to_string(b) + "] (" + std::to_string(p.cache_seqlens[b]) +
               ") must be in [0, seqlen_k] (the cache's capacity, " + std::to_string(p.seqlen_k) + ")";
  }
  if (p.seqlen_new < 0) return "seqlen_new (" + std::to_string(p.seqlen_new) + ") must be >= 0";
  if (p.seqlen_new > 0) {
    if (p.cache_seqlens.empty()) return "seqlen_new (appended keys) needs cache_seqlens (where each sequence's keys end)";
    for (std::size_t b = 0; b < p.cache_seqlens.size(); ++b)
      if (p.cache_seqlens[b] > p.seqlen_k - p.seqlen_new)  // both in [0, seqlen_k]: no overflow
        return "cache_seqlens[" + std::to_string(b) + "] + seqlen_new (" + std::to_string(p.cache_seqlens[b]) + " + " +
               std::to_string(p.seqlen_new) + ") exceeds the cache's capacity seqlen_k (" + std::to_string(p.seqlen_k) + ")";
  }
  if (p.num_splits < 0 || p.num_splits > Problem::max_splits)
    return "num_splits (" + std::to_string(p.num_splits) + ") must be in [0, " + std::to_string(Problem::max_splits) +
           "] (0: the implementation's choice)";
  if (p.page_size < 0) return "page_size (" + std::to_string(p.page_size) + ") must be >= 0 (0: a contiguous cache)";
  if (!p.paged()) {
    if (p.num_pages != 0 || !p.block_table.empty()) return "num_pages and block_table need a page_size (a paged KV cache)";
    return {};
  }
  if (p.page_size % 16 != 0 || p.page_size > Problem::max_page_size)
    return "page_size (" + std::to_string(p.page_size) + ") must be a multiple of 16 up to " +
           std::to_string(Problem::max_page_size);
  if (p.seqlen_k % p.page_size != 0)
    return "seqlen_k (" + std::to_string(p.seqlen_k) + ", the block table's capacity) must be a multiple of page_size (" +
           std::to_string(p.page_size) + ")";
  if (p.num_pages < 1) return "num_pages (" + std::to_string(p.num_pages) + ") must be >= 1";
  // validate() has bounded batch * seqlen_k by K's element limit before this runs: no overflow.
  const std::int64_t per_sequence = p.seqlen_k / p.page_size;
  const std::int64_t entries = p.batch * per_sequence;
  if (static_cast<std::int64_t>(p.block_table.size()) != entries)
    return "block_table must hold batch x seqlen_k / page_size = " + std::to_string(entries) + " entries, not " +
           std::to_string(p.block_table.size());
  for (std::size_t e = 0; e < p.block_table.size(); ++e)
    if (p.block_table[e] < 0 || p.block_table[e] >= p.num_pages)
      return "block_table entry " + std::to_string(e) + " (sequence " + std::to_string(static_cast<std::int64_t>(e) / per_sequence) +
             ", page " + std::to_string(static_cast<std::int64_t>(e) % per_sequence) + ") is " +
             std::to_string(p.block_table[e]) + ", past the page pool [0, " + std::to_string(p.num_pages) + ")";
  if (p.seqlen_new == 0) return {};
  const SharedAppendedPage shared = shared_appended_page(p.block_table, p.batch, per_sequence, p.page_size, p.seqlen_new,
                                                         [&](std::int64_t b) { return p.stored_keys(b); });
  if (shared.page >= 0)
    return "block_table: page " + std::to_string(shared.page) + " receives sequence " + std::to_string(shared.sequence) +
           "'s appended keys but another used entry maps it too (pages that receive appended keys cannot be shared)";
  return {};
}
}  // namespace

std::string Problem::validate() const {
  ++validations;
  for (const auto& [name, v] : sizes()) {
    if (auto e = positive_error(name, v); !e.empty()) return e;
  }
  if (heads_q % heads_kv != 0)
    return "heads_q (" + std::to_string(heads_q) + ") must be a multiple of heads_kv (" +
           std::to_string(heads_kv) + ")";
  if (head_dim > max_head_dim)
    return "head_dim (" + std::to_string(head_dim) + ") must be at most " +
           std::to_string(max_head_dim);
  if (window_left < -1 || window_right < -1)
    return "window (" + std::to_string(window_left) + "," + std::to_string(window_right) +
           ") sides must be >= 0, or -1 for unbounded";
  if (scale && !std::isfinite(*scale)) return "scale must be finite";
  if (auto e = packing_error(*this); !e.empty()) return e;
  if (softcap && !(std::isfinite(*softcap) && *softcap > 0))
    return "softcap (" + std::to_string(*softcap) + ") must be a finite number > 0 (omit it for no cap)";
  if (!alibi_slopes.empty()) {
    if (static_cast<std::int64_t>(alibi_slopes.size()) != heads_q)
      return "alibi_slopes must hold one slope per query head (" + std::to_string(heads_q) + "), not " +
             std::to_string(alibi_slopes.size());
    for (std::size_t h = 0; h < alibi_slopes.size(); ++h)
      if (!std::isfinite(alibi_slopes[h])) return "alibi_slopes[" + std::to_string(h) + "] must be finite";
  }
  // Element counts are checked by division so that the products cannot overflow.
  auto too_big = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    std::int64_t n = 1;
    for (std::int64_t x : {a, b, c, d}) {
      if (n > max_elements / x) return true;
      n *= x;
    }
    return false;
  };
  if (too_big(batch, seqlen_q, heads_q, head_dim))
    return "Q would have more than 2^34 elements";
  if (too_big(batch, seqlen_k, heads_kv, head_dim))
    return "K and V would have more than 2^34 elements";
  if (page_size > 0 && num_pages > 0 && too_big(num_pages, page_size, heads_kv, head_dim))
    return "the page pool would have more than 2^34 elements";
  return cache_error(*this);
}

namespace {
std::int64_t longest(const std::vector<std::int64_t>& cu, std::int64_t dense) {
  if (cu.empty()) return dense;
  std::int64_t m = 0;
  for (std::size_t b = 1; b < cu.size(); ++b) m = std::max(m, cu[b] - cu[b - 1]);
  return m;
}
}  // namespace

std::int64_t Problem::max_seqlen_q() const { return longest(cu_seqlens_q, seqlen_q); }
std::int64_t Problem::max_seqlen_k() const { return longest(cu_seqlens_k, seqlen_k); }

float Problem::softmax_scale() const {
  if (scale) return *scale;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

std::string Problem::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype) << " b=" << batch << " hq=" << heads_q << " hkv=" << heads_kv
    << " sq=" << seqlen_q << " sk=" << seqlen_k << " d=" << head_dim;
  if (causal())
    s << " causal";
  else if (has_mask())
    s << " window=" << window_left << "," << window_right;
  if (scale) s << " scale=" << *scale;
  if (softcap) s << " softcap=" << *softcap;
  if (alibi()) s << " alibi";
  if (!cache_seqlens.empty()) {  // the used lengths, the first 8 in full
    s << " cache=[";
    for (std::int64_t b = 0; b < batch && b < 8; ++b) s << (b ? " " : "") << cache_seqlens[static_cast<std::size_t>(b)];
    s << (batch > 8 ? " ...]" : "]");
  }
  if (seqlen_new > 0) s << " new=" << seqlen_new;
  if (paged()) s << " pages=" << num_pages << "x" << page_size;
  if (num_splits > 0) s << " splits=" << num_splits;
  if (packed()) {  // the lengths, the first 8 sequences in full
    s << " packed=" << sequences() << " [";
    for (std::int64_t b = 0; b < sequences() && b < 8; ++b)
      s << (b ? " " : "") << cu_seqlens_q[b + 1] - cu_seqlens_q[b] << "/" << cu_seqlens_k[b + 1] - cu_seqlens_k[b];
    s << (sequences() > 8 ? " ...]" : "]");
  }
  return s.str();
}

Problem logical_problem(const Problem& p) {
  if (!p.kv_cache()) return p;
  Problem l = p;
  l.cache_seqlens.clear(), l.block_table.clear();
  l.page_size = l.num_pages = l.num_splits = l.seqlen_new = 0;
  l.batch = 1;
  l.seqlen_q = p.batch * p.seqlen_q;
  l.cu_seqlens_q.assign(1, 0), l.cu_seqlens_k.assign(1, 0);
  for (std::int64_t b = 0; b < p.batch; ++b) {
    l.cu_seqlens_q.push_back(l.cu_seqlens_q.back() + p.seqlen_q);
    l.cu_seqlens_k.push_back(l.cu_seqlens_k.back() + p.used_keys(b));
  }
  if (l.cu_seqlens_k.back() == 0) {  // no key anywhere: a sequence of no rows holds seqlen_k's one key
    l.cu_seqlens_q.push_back(l.seqlen_q);
    l.cu_seqlens_k.push_back(1);
  }
  l.seqlen_k = l.cu_seqlens_k.back();
  return l;
}

std::vector<float> standard_alibi_slopes(std::int64_t heads) {
  std::int64_t m = 1;
  while (m * 2 <= heads) m *= 2;
  std::vector<float> slopes;
  for (std::int64_t h = 0; h < heads; ++h) {
    const double e = h < m ? -8.0 * static_cast<double>(h + 1) / static_cast<double>(m)
                           : -4.0 * static_cast<double>(2 * (h - m) + 1) / static_cast<double>(m);
    slopes.push_back(static_cast<float>(std::exp2(e)));
  }
  return slopes;
}

ValidProblem::ValidProblem(const Problem& p) : ValidProblem(p, "") {}

ValidProblem::ValidProblem(const Problem& p, const char* prefix) : p_(p) {
  if (std::string e = p.validate(); !e.empty()) throw std::invalid_argument(prefix + e);
}

std::uint64_t validations_on_this_thread() { return validations; }

}  // namespace flashproof
