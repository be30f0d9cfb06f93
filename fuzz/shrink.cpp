#include "fuzz/shrink.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace flashproof::fuzz {
namespace {

// Smaller variants of p, most aggressive first; each is valid and strictly smaller in one respect.
std::vector<Problem> candidates(const Problem& p) {
  std::vector<Problem> out;
  const auto add = [&](auto change) {
    Problem q = p;
    change(q);
    if (q.validate().empty()) out.push_back(q);
  };
  if (p.batch > 1) add([](Problem& q) { q.batch = 1; });
  // A packed batch: one sequence dropped, or one sequence's lengths halved (the offsets rebuilt),
  // each sequence in turn; the dense lengths below leave a packed problem invalid, so are not tried.
  const auto resize_sequence = [&](std::int64_t b, auto lengths) {
    add([&](Problem& q) {
      std::vector<std::int64_t> cu_q{0}, cu_k{0};
      for (std::int64_t s = 0; s < p.sequences(); ++s) {
        std::int64_t sq = p.cu_seqlens_q[s + 1] - p.cu_seqlens_q[s], sk = p.cu_seqlens_k[s + 1] - p.cu_seqlens_k[s];
        if (s == b && !lengths(sq, sk)) continue;  // dropped
        cu_q.push_back(cu_q.back() + sq), cu_k.push_back(cu_k.back() + sk);
      }
      q.cu_seqlens_q = cu_q, q.cu_seqlens_k = cu_k;
      q.seqlen_q = cu_q.back(), q.seqlen_k = cu_k.back();
    });
  };
  for (std::int64_t b = 0; p.packed() && b < p.sequences(); ++b) {
    if (p.sequences() > 1) resize_sequence(b, [](std::int64_t&, std::int64_t&) { return false; });
    if (p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b] > 1 || p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b] > 1)
      resize_sequence(b, [](std::int64_t& sq, std::int64_t& sk) {
        sq = (sq + 1) / 2, sk = (sk + 1) / 2;
        return true;
      });
  }
  // A KV cache: one sequence dropped (its lengths and table row with it), each stored length halved,
  // the appended keys halved or stored beforehand, the capacity cut to the longest used length
  // (whole pages), the pages made a contiguous cache.
  if (p.kv_cache() && !p.cache_seqlens.empty()) {
    const std::int64_t per = p.pages_per_sequence();
    for (std::int64_t b = 0; p.batch > 1 && b < p.batch; ++b)
      add([&](Problem& q) {
        q.batch -= 1;
        q.cache_seqlens.erase(q.cache_seqlens.begin() + b);
        if (q.paged()) q.block_table.erase(q.block_table.begin() + b * per, q.block_table.begin() + (b + 1) * per);
      });
    for (std::int64_t b = 0; b < p.batch; ++b)
      if (p.cache_seqlens[static_cast<std::size_t>(b)] > 1)
        add([&](Problem& q) { q.cache_seqlens[static_cast<std::size_t>(b)] /= 2; });
    if (p.appends()) {  // fewer appended keys, or none (then already stored)
      if (p.seqlen_new > 1) add([](Problem& q) { q.seqlen_new /= 2; });
      add([](Problem& q) {
        for (std::int64_t& n : q.cache_seqlens) n += q.seqlen_new;
        q.seqlen_new = 0;
      });
    }
    const std::int64_t unit = p.paged() ? p.page_size : 1;
    const std::int64_t longest = *std::max_element(p.cache_seqlens.begin(), p.cache_seqlens.end()) + p.seqlen_new;
    const std::int64_t capacity = std::max(unit, (longest + unit - 1) / unit * unit);
    if (capacity < p.seqlen_k)
      add([&](Problem& q) {
        q.seqlen_k = capacity;
        if (!q.paged()) return;
        std::vector<std::int64_t> table;
        for (std::int64_t b = 0; b < q.batch; ++b)
          for (std::int64_t t = 0; t < capacity / unit; ++t) table.push_back(p.block_table[static_cast<std::size_t>(b * per + t)]);
        q.block_table = table;
      });
    if (p.paged())
      add([](Problem& q) {
        q.page_size = q.num_pages = 0;
        q.block_table.clear();
      });
  }
  if (p.heads_kv > 1) add([](Problem& q) { q.heads_q /= q.heads_kv, q.heads_kv = 1; });
  if (p.heads_q > p.heads_kv) add([](Problem& q) { q.heads_q = q.heads_kv; });
  for (std::int64_t Problem::*len : {&Problem::seqlen_q, &Problem::seqlen_k}) {
    const std::int64_t n = p.*len;
    if (n > 1) add([&](Problem& q) { q.*len = 1; });
    if (n > 2) add([&](Problem& q) { q.*len = n / 2; });
    if (n > 1) add([&](Problem& q) { q.*len = n - 1; });
  }
  if (p.has_mask()) add([](Problem& q) { q.window_left = q.window_right = -1; });
  if (p.window_left > 0) add([](Problem& q) { q.window_left /= 2; });
  if (p.window_right > 0) add([](Problem& q) { q.window_right /= 2; });
  if (p.head_dim > 1) add([&](Problem& q) { q.head_dim = (q.head_dim + 1) / 2; });
  if (p.head_dim > 1) add([&](Problem& q) { q.head_dim -= 1; });
  return out;
}

}  // namespace

ShrinkResult shrink_case(const Case& c, const CaseOutcome& original, const CheckOptions& options,
                         const std::string& scratch, double timeout_seconds, int max_attempts, double max_seconds,
                         const AdoptRule& adopt) {
  const auto start = std::chrono::steady_clock::now();
  const auto out_of_budget = [&](int attempts) {
    return attempts >= max_attempts ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds;
  };
  ShrinkResult r{c, original, failure_target(original), 0, 0};
  // The same status is not enough (failure_signature.h): the candidate must fail the original's
  // first failing tensor by the same rule, or crash the same way.
  const AdoptRule keeps = adopt ? adopt : AdoptRule([&](const CaseOutcome& o) { return keeps_failure(r.target, o); });
  bool progress = true;
  while (progress && !out_of_budget(r.attempts)) {
    progress = false;
    for (const Problem& smaller : candidates(r.c.problem)) {
      if (out_of_budget(r.attempts)) break;
      Case trial = r.c;
      trial.problem = smaller;
      ++r.attempts;
      const CaseOutcome o = run_case_isolated(trial, options, scratch, timeout_seconds);
      if (keeps(o)) {
        r.c = trial;
        r.outcome = o;
        ++r.adopted;
        progress = true;
        break;
      }
    }
  }
  return r;
}

}  // namespace flashproof::fuzz
