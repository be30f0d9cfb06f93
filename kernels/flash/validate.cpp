#include "kernels/flash/validate.h"

#include "core/appended_pages.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/flash/built_buckets.h"
#include "kernels/flash/gpu_runtime.h"

namespace flashproof::kernels {
namespace {

// Row, key and window arithmetic in the kernels is int32: with both lengths below 2^29 and the
// window sides clamped (make_flash_shape), i + offset + window stays below 2^31.
constexpr std::int64_t kMaxSeqlen = std::int64_t{1} << 29;
constexpr std::int64_t kMaxGridDim = 65535;  // grid y (batch) and z (heads)
constexpr float kLog2e = 1.44269504088896340736f;  // fl(log2 e), the score modification's

std::string fmt(const char* name, std::int64_t v) { return std::string(name) + " (" + std::to_string(v) + ")"; }

template <algo::KernelFamily kFamily>
int bucket_of(int head_dim) {
  return algo::head_dim_bucket(kFamily, head_dim);
}

template <algo::KernelFamily kFamily>
bool built(int bucket) {
  return flash::bucket_built(kFamily, bucket);
}

template <algo::KernelFamily kFamily>
bool score_mod_built(int bucket) {
  return flash::score_mod_built(kFamily, bucket);
}

template <algo::KernelFamily kFamily>
bool decode_built(int bucket) {
  return flash::decode_built(kFamily, bucket);
}

template <algo::KernelFamily kFamily>
constexpr FlashKernelLimits kLimits{algo::family_name(kFamily), &bucket_of<kFamily>, &built<kFamily>,
                                    flash::buckets_option(kFamily),
                                    kFamily == algo::KernelFamily::fa2 ? &score_mod_built<kFamily> : nullptr,
                                    kFamily == algo::KernelFamily::fa2 ? &decode_built<kFamily> : nullptr};

std::string prefix(const FlashKernelLimits& limits) { return std::string(limits.name) + ": "; }

std::string target_error(const FlashKernelLimits& limits, FlashTarget target) {
  if (target == FlashTarget::gpu && !flash_gpu_usable())
    return prefix(limits) + "target gpu requested but no usable GPU (sm_80+) in this build";
  return {};
}

// Requirements on one tensor given its expected sizes.
std::string tensor_error(const FlashKernelLimits& limits, const char* name, const FlashTensor& t,
                         const std::array<std::int64_t, 4>& expected) {
  const std::string n = prefix(limits) + name;
  if (t.data == nullptr) return n + " is null";
  for (int i = 0; i < 4; ++i) {
    if (t.sizes[i] != expected[i]) {
      static const char* dims[] = {"batch", "seqlen", "heads", "head_dim"};
      return n + " has " + fmt(dims[i], t.sizes[i]) + " where " + std::to_string(expected[i]) + " is expected";
    }
  }
  if (t.strides[3] != 1) return n + " must have a contiguous last dimension (stride 1, got " + std::to_string(t.strides[3]) + ")";
  for (int i = 0; i < 3; ++i) {
    if (t.strides[i] < 0 || t.strides[i] % 8 != 0)
      return n + " strides must be non-negative multiples of 8 elements (stride " + std::to_string(i) + " is " +
             std::to_string(t.strides[i]) + ")";
  }
  if (reinterpret_cast<std::uintptr_t>(t.data) % 16 != 0) return n + " data must be 16-byte aligned";
  return {};
}

std::string shape_error(const FlashKernelLimits& limits, const FlashTensor& q, const FlashTensor& k,
                        const FlashOptions& o) {
  const std::string p = prefix(limits);
  const auto& qs = q.sizes;
  const auto& ks = k.sizes;
  for (int i = 0; i < 4; ++i) {
    if (qs[i] < 1) return p + "q sizes must be >= 1 (dimension " + std::to_string(i) + " is " + std::to_string(qs[i]) + ")";
    if (ks[i] < 1) return p + "k sizes must be >= 1 (dimension " + std::to_string(i) + " is " + std::to_string(ks[i]) + ")";
  }
  if (ks[0] != qs[0]) return p + "k has " + fmt("batch", ks[0]) + " but q has " + std::to_string(qs[0]);
  if (ks[3] != qs[3]) return p + "k has " + fmt("head_dim", ks[3]) + " but q has " + std::to_string(qs[3]);
  if (qs[2] % ks[2] != 0) return p + fmt("heads_q", qs[2]) + " must be a multiple of " + fmt("heads_kv", ks[2]);
  if (qs[3] > 256) return p + fmt("head_dim", qs[3]) + " must be at most 256";
  if (qs[3] % 8 != 0) return p + fmt("head_dim", qs[3]) + " must be a multiple of 8 (pad it with zeros)";
  if (const int bucket = limits.bucket_of(static_cast<int>(qs[3])); !limits.bucket_built(bucket))
    return p + "head_dim bucket " + std::to_string(bucket) + " is not built (" + limits.buckets_option + ")";
  if (qs[1] > kMaxSeqlen || ks[1] > kMaxSeqlen) return p + "sequence lengths must be at most 2^29";
  if (qs[0] > kMaxGridDim) return p + fmt("batch", qs[0]) + " must be at most 65535";
  if (qs[2] > kMaxGridDim) return p + fmt("heads_q", qs[2]) + " must be at most 65535";
  if (o.softmax_scale && !std::isfinite(*o.softmax_scale)) return p + "softmax_scale must be finite";
  return {};
}

// A packed batch's offsets (FlashOptions::cu_seqlens_q / _k) against the tensors' sizes: what the
// kernels index storage with, so that none reads outside its tensors or another sequence's rows.
std::string packed_error(const FlashKernelLimits& limits, const FlashTensor& q, const FlashTensor& k,
                         const FlashOptions& o) {
  const std::string p = prefix(limits);
  const auto& cq = o.cu_seqlens_q;
  const auto& ck = o.cu_seqlens_k;
  if (cq.empty() && ck.empty()) return {};
  if (cq.empty() != ck.empty())
    return p + "cu_seqlens_q and cu_seqlens_k must be given together (got " + std::to_string(cq.size()) + " and " +
           std::to_string(ck.size()) + " offsets)";
  if (cq.size() != ck.size())
    return p + "cu_seqlens_q and cu_seqlens_k must have the same count (got " + std::to_string(cq.size()) + " and " +
           std::to_string(ck.size()) + ")";
  if (cq.size() < 2) return p + "cu_seqlens_q must hold at least 2 offsets (got " + std::to_string(cq.size()) + ")";
  if (static_cast<std::int64_t>(cq.size()) - 1 > kMaxGridDim)
    return p + "packed batches must have at most 65535 sequences (got " + std::to_string(cq.size() - 1) + ")";
  if (q.sizes[0] != 1) return p + "a packed batch needs tensors of batch 1 (q has batch " + std::to_string(q.sizes[0]) + ")";
  const std::pair<const char*, std::span<const std::int32_t>> offsets[] = {{"cu_seqlens_q", cq}, {"cu_seqlens_k", ck}};
  const std::int64_t totals[] = {q.sizes[1], k.sizes[1]};
  const char* tensor_names[] = {"q", "k"};
  for (int side = 0; side < 2; ++side) {
    const auto& [name, cu] = offsets[side];
    const std::string n = p + name;
    if (cu[0] != 0) return n + " must start at 0 (got " + std::to_string(cu[0]) + ")";
    for (std::size_t b = 1; b < cu.size(); ++b)
      if (cu[b] < cu[b - 1])
        return n + " must be non-decreasing (offset " + std::to_string(b) + " is " + std::to_string(cu[b]) +
               " after " + std::to_string(cu[b - 1]) + ")";
    if (cu.back() != totals[side])
      return n + " must end at " + tensor_names[side] + "'s seqlen (" + std::to_string(totals[side]) + "), got " +
             std::to_string(cu.back());
  }
  return {};
}

// The soft cap and ALiBi slopes (FlashOptions::softcap, ::alibi_slopes) against the kernel and the
// call: a finite cap > 0, one finite slope per query head, a kernel that has them for this head
// dim (FlashKernelLimits::score_mod_built) and the shipped tiles.
std::string score_mod_error(const FlashKernelLimits& limits, const FlashTensor& q, const FlashOptions& o) {
  const std::string p = prefix(limits);
  if (!o.softcap && o.alibi_slopes.empty()) return {};
  if (o.softcap && !(std::isfinite(*o.softcap) && *o.softcap > 0))
    return p + "softcap must be finite and > 0 (got " + std::to_string(*o.softcap) + ")";
  if (o.softcap) {  // the kernels' constants (make_score_mod_params) must be finite and nonzero
    const float cap_log2 = *o.softcap * kLog2e;
    if (!std::isfinite(cap_log2) || cap_log2 == 0 || !std::isfinite(1.0f / cap_log2))
      return p + "softcap (" + std::to_string(*o.softcap) + ") is out of the kernels' range (c * log2 e and its inverse must be finite fp32)";
  }
  if (!o.alibi_slopes.empty()) {
    if (static_cast<std::int64_t>(o.alibi_slopes.size()) != q.sizes[2])
      return p + "alibi_slopes must hold one slope per query head (got " + std::to_string(o.alibi_slopes.size()) +
             " for heads_q " + std::to_string(q.sizes[2]) + ")";
    for (std::size_t h = 0; h < o.alibi_slopes.size(); ++h)
      if (!std::isfinite(o.alibi_slopes[h])) return p + "alibi_slopes must be finite (slope " + std::to_string(h) + " is not)";
  }
  const int bucket = limits.bucket_of(static_cast<int>(q.sizes[3]));
  if (limits.score_mod_built == nullptr) return p + "the soft cap and ALiBi are not supported";
  if (!limits.score_mod_built(bucket))
    return p + "the soft cap and ALiBi are not built for head_dim bucket " + std::to_string(bucket);
  if (o.tiles != algo::TileSet::shipped) return p + "the soft cap and ALiBi run with the shipped tiles only";
  return {};
}

using NamedTensor = std::tuple<const char*, const FlashTensor*, bool>;  // name, tensor, shaped like q (else like k)

// The checks both directions make: target, shapes, then each tensor's sizes and layout, then LSE.
std::string call_error(const FlashKernelLimits& limits, FlashTarget target, const FlashTensor& q, const FlashTensor& k,
                       const FlashOptions& options, std::initializer_list<NamedTensor> tensors, const float* lse) {
  if (std::string e = target_error(limits, target); !e.empty()) return e;
  if (q.data == nullptr || k.data == nullptr) return prefix(limits) + "q and k must not be null";
  if (std::string e = shape_error(limits, q, k, options); !e.empty()) return e;
  if (std::string e = packed_error(limits, q, k, options); !e.empty()) return e;
  if (std::string e = score_mod_error(limits, q, options); !e.empty()) return e;
  for (const auto& [name, tensor, like_q] : tensors)
    if (std::string e = tensor_error(limits, name, *tensor, like_q ? q.sizes : k.sizes); !e.empty()) return e;
  if (lse == nullptr) return prefix(limits) + "lse is null";
  return {};
}

constexpr std::int64_t kMaxSplits = 128;
constexpr std::int64_t kMaxPageSize = 256;
constexpr std::int64_t kInt32Max = 2147483647;

// A decode call's own rules (FlashOptions::decode(); docs/fa2.md "Decoding"), before the dense
// checks of its logical shape.
std::string decode_error(const FlashKernelLimits& limits, FlashTarget target, const FlashForwardTensors& t,
                         const FlashOptions& o) {
  const std::string p = prefix(limits);
  if (std::string e = target_error(limits, target); !e.empty()) return e;
  if (limits.decode_built == nullptr) return p + "KV caches and split-KV are not supported";
  if (t.q.data == nullptr || t.k.data == nullptr) return p + "q and k must not be null";
  if (!o.cu_seqlens_q.empty() || !o.cu_seqlens_k.empty()) return p + "a KV cache cannot be a packed batch";
  if (o.softcap || !o.alibi_slopes.empty()) return p + "the soft cap and ALiBi are not built for the KV-cache path";
  if (o.tiles != algo::TileSet::shipped) return p + "the KV-cache path runs with the shipped tiles only";
  if (o.num_splits < 0 || o.num_splits > kMaxSplits)
    return p + fmt("num_splits", o.num_splits) + " must be 0 (heuristic) to 128";
  const auto& qs = t.q.sizes;
  const auto& ks = t.k.sizes;
  for (int i = 0; i < 4; ++i) {
    if (qs[i] < 1) return p + "q sizes must be >= 1 (dimension " + std::to_string(i) + " is " + std::to_string(qs[i]) + ")";
    if (ks[i] < 1) return p + "k sizes must be >= 1 (dimension " + std::to_string(i) + " is " + std::to_string(ks[i]) + ")";
  }
  if (qs[3] <= 256 && qs[3] % 8 == 0) {
    const int bucket = limits.bucket_of(static_cast<int>(qs[3]));
    if (limits.bucket_built(bucket) && !limits.decode_built(bucket))
      return p + "the KV-cache path is not built for head_dim bucket " + std::to_string(bucket);
  }
  const std::int64_t batch = qs[0];
  if (o.page_size == 0) {
    if (!o.block_table.empty()) return p + "block_table given without a page_size";
  } else {
    if (o.page_size < 0 || o.page_size % 16 != 0 || o.page_size > kMaxPageSize)
      return p + fmt("page_size", o.page_size) + " must be a multiple of 16 up to 256";
    if (ks[1] != o.page_size)
      return p + "k (the page pool) has " + fmt("seqlen", ks[1]) + " where page_size " + std::to_string(o.page_size) + " is expected";
    if (ks[0] > kInt32Max) return p + fmt("num_pages", ks[0]) + " must fit int32";
    const std::int64_t entries = static_cast<std::int64_t>(o.block_table.size());
    if (entries == 0 || entries % batch != 0)
      return p + "block_table must hold batch x pages_per_sequence entries (got " + std::to_string(entries) +
             " for batch " + std::to_string(batch) + ")";
    if (entries > kInt32Max) return p + "block_table must have at most 2^31 - 1 entries";
    if (entries / batch * o.page_size > (std::int64_t{1} << 29))
      return p + "the cache capacity (pages_per_sequence x page_size) must be at most 2^29";
    for (std::int64_t i = 0; i < entries; ++i)
      if (o.block_table[static_cast<std::size_t>(i)] < 0 || o.block_table[static_cast<std::size_t>(i)] >= ks[0])
        return p + "block_table entry " + std::to_string(i) + " (" + std::to_string(o.block_table[static_cast<std::size_t>(i)]) +
               ") is outside the pool of " + std::to_string(ks[0]) + " pages";
  }
  const std::int64_t capacity = decode_capacity(t, o);
  if (!o.cache_seqlens.empty()) {
    if (static_cast<std::int64_t>(o.cache_seqlens.size()) != batch)
      return p + "cache_seqlens must hold one length per sequence (got " + std::to_string(o.cache_seqlens.size()) +
             " for batch " + std::to_string(batch) + ")";
    for (std::size_t b = 0; b < o.cache_seqlens.size(); ++b)
      if (o.cache_seqlens[b] < 0 || o.cache_seqlens[b] > capacity)
        return p + "cache_seqlens[" + std::to_string(b) + "] (" + std::to_string(o.cache_seqlens[b]) +
               ") is outside the cache's capacity 0.." + std::to_string(capacity);
  }
  if (t.k_new.data != nullptr || t.v_new.data != nullptr) {  // appended keys
    if (o.cache_seqlens.empty()) return p + "k_new and v_new (appended keys) need cache_seqlens";
    const std::int64_t n = t.k_new.sizes[1];
    if (n < 1 || n > capacity)
      return p + "k_new has " + fmt("seqlen", n) + " where 1 to the cache's capacity " + std::to_string(capacity) + " is expected";
    for (const auto& [name, tensor] : {std::pair<const char*, const FlashTensor*>{"k_new", &t.k_new}, {"v_new", &t.v_new}})
      if (std::string e = tensor_error(limits, name, *tensor, {batch, n, ks[2], ks[3]}); !e.empty()) return e;
    for (std::size_t b = 0; b < o.cache_seqlens.size(); ++b)
      if (o.cache_seqlens[b] > capacity - n)
        return p + "cache_seqlens[" + std::to_string(b) + "] + seqlen_new (" + std::to_string(o.cache_seqlens[b]) + " + " +
               std::to_string(n) + ") exceeds the cache's capacity " + std::to_string(capacity);
    // A page receiving appended keys mapped by another used entry (core/appended_pages.h).
    if (o.page_size > 0) {
      const SharedAppendedPage shared = shared_appended_page(
          o.block_table, batch, static_cast<std::int64_t>(o.block_table.size()) / batch, o.page_size, n,
          [&](std::int64_t b) { return static_cast<std::int64_t>(o.cache_seqlens[static_cast<std::size_t>(b)]); });
      if (shared.page >= 0)
        return p + "page " + std::to_string(shared.page) + " receives sequence " + std::to_string(shared.sequence) +
               "'s appended keys but another used table entry maps it too";
    }
  }
  return {};
}

}  // namespace

std::int64_t decode_capacity(const FlashForwardTensors& t, const FlashOptions& o) {
  if (o.page_size == 0) return t.k.sizes[1];
  return static_cast<std::int64_t>(o.block_table.size()) / t.q.sizes[0] * o.page_size;
}

const FlashKernelLimits& flash_limits(algo::KernelFamily family) {
  return family == algo::KernelFamily::fa1 ? kLimits<algo::KernelFamily::fa1> : kLimits<algo::KernelFamily::fa2>;
}

std::string flash_forward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashForwardTensors& t,
                                const FlashOptions& options) {
  if (!options.decode() && (t.k_new.data != nullptr || t.v_new.data != nullptr))  // never dropped silently
    return prefix(limits) + "k_new and v_new (appended keys) need cache_seqlens (a decode call)";
  if (options.decode()) {
    if (std::string e = decode_error(limits, target, t, options); !e.empty()) return e;
    if (options.page_size == 0) return call_error(limits, target, t.q, t.k, options,
                                                  {{"q", &t.q, true}, {"k", &t.k, false}, {"v", &t.v, false}, {"o", &t.o, true}}, t.lse);
    // Paged: the dense checks on the logical K ([batch, capacity, heads_kv, d]), the pool's own
    // sizes and layout for K and V.
    FlashTensor logical = t.k;
    logical.sizes = {t.q.sizes[0], decode_capacity(t, options), t.k.sizes[2], t.k.sizes[3]};
    if (std::string e = call_error(limits, target, t.q, logical, options, {{"q", &t.q, true}, {"o", &t.o, true}}, t.lse);
        !e.empty())
      return e;
    for (const auto& [name, tensor] : {std::pair<const char*, const FlashTensor*>{"k", &t.k}, {"v", &t.v}})
      if (std::string e = tensor_error(limits, name, *tensor, t.k.sizes); !e.empty()) return e;
    return {};
  }
  return call_error(limits, target, t.q, t.k, options,
                    {{"q", &t.q, true}, {"k", &t.k, false}, {"v", &t.v, false}, {"o", &t.o, true}}, t.lse);
}

std::string flash_backward_error(const FlashKernelLimits& limits, FlashTarget target, const FlashBackwardTensors& t,
                                 const FlashOptions& options) {
  if (options.decode()) return prefix(limits) + "KV caches and split-KV are forward only";
  return call_error(limits, target, t.q, t.k, options,
                    {{"q", &t.q, true}, {"k", &t.k, false}, {"v", &t.v, false}, {"o", &t.o, true},
                     {"dout", &t.dout, true}, {"dq", &t.dq, true}, {"dk", &t.dk, false}, {"dv", &t.dv, false}},
                    t.lse);
}

ScoreModParams make_score_mod_params(FlashTarget target, const FlashOptions& o, std::unique_ptr<FlashBuffer>& slopes) {
  ScoreModParams m;
  // fl(log2 e), then each constant rounded on its own (algo/score_mod.h).
  const float log2e = kLog2e;
  if (o.softcap) {
    m.cap_log2 = *o.softcap * log2e;
    m.inv_cap_log2 = 1.0f / m.cap_log2;
  }
  if (!o.alibi_slopes.empty()) {
    std::vector<float> slope_log2(o.alibi_slopes.size());
    for (std::size_t h = 0; h < slope_log2.size(); ++h) {
      slope_log2[h] = o.alibi_slopes[h] * log2e;
      if (o.score_mod_flaw == FlashScoreModFlaw::alibi_wrong_sign) slope_log2[h] = -slope_log2[h];
    }
    slopes = std::make_unique<FlashBuffer>(target, slope_log2.size() * sizeof(float));
    slopes->upload(slope_log2.data(), slope_log2.size() * sizeof(float));
    m.slope_log2 = static_cast<const float*>(slopes->data());
  }
  m.cap_derivative = o.score_mod_flaw != FlashScoreModFlaw::missing_softcap_derivative;
  m.alibi_top_left = o.score_mod_flaw == FlashScoreModFlaw::alibi_top_left;
  return m;
}

FlashShape make_flash_shape(FlashDtype dtype, const FlashTensor& q, const FlashTensor& k, const FlashOptions& o) {
  FlashShape s;
  s.batch = static_cast<int>(q.sizes[0]);
  s.seqlen_q = static_cast<int>(q.sizes[1]);
  s.seqlen_k = static_cast<int>(k.sizes[1]);
  s.heads_q = static_cast<int>(q.sizes[2]);
  s.heads_kv = static_cast<int>(k.sizes[2]);
  s.head_dim = static_cast<int>(q.sizes[3]);
  s.tag = dtype == FlashDtype::bf16 ? arch::MmaTag::bf16 : arch::MmaTag::fp16;
  s.softmax_scale = o.softmax_scale ? *o.softmax_scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  // log2(e) folded into the scale once, rounded to fp32 (the kernels then round each product).
  s.scale_log2 = static_cast<float>(static_cast<double>(s.softmax_scale) * 1.4426950408889634);
  // Clamped window sides see the same keys and keep the int arithmetic small: right >= seqlen_q
  // already admits every key (i + offset + seqlen_q >= seqlen_k), left >= seqlen_k likewise.
  s.window_left = o.window_left < 0 ? -1 : std::min(o.window_left, s.seqlen_k);
  s.window_right = o.window_right < 0 ? -1 : std::min(o.window_right, s.seqlen_q);
  return s;
}

std::vector<algo::SequenceSpan<int>> packed_sequences(const FlashOptions& o) {
  std::vector<algo::SequenceSpan<int>> out;
  for (std::size_t b = 0; b + 1 < o.cu_seqlens_q.size(); ++b)
    out.push_back(algo::packed_sequence<int>(o.cu_seqlens_q, o.cu_seqlens_k, static_cast<int>(b)));
  return out;
}

algo::SequenceSpan<int> longest_sequence(const std::vector<algo::SequenceSpan<int>>& sequences) {
  algo::SequenceSpan<int> longest{0, 0, 0, 0};
  for (const auto& seq : sequences) {
    longest.seqlen_q = std::max(longest.seqlen_q, seq.seqlen_q);
    longest.seqlen_k = std::max(longest.seqlen_k, seq.seqlen_k);
  }
  return longest;
}

FlashShape sequence_shape(const FlashShape& storage, const FlashOptions& o, const algo::SequenceSpan<int>& seq) {
  FlashShape s = storage;
  s.batch = 1;
  s.seqlen_q = seq.seqlen_q;
  s.seqlen_k = seq.seqlen_k;
  s.window_left = o.window_left < 0 ? -1 : std::min(o.window_left, s.seqlen_k);
  s.window_right = o.window_right < 0 ? -1 : std::min(o.window_right, s.seqlen_q);
  return s;
}

SeqTensor rows_from(const SeqTensor& t, int first_row) {
  SeqTensor r = t;
  r.data = t.at(0, first_row, 0);
  return r;
}

SequenceWanted sequence_wanted(const FlashOptions& o, const FlashShape& storage, const algo::SequenceSpan<int>& seq) {
  SequenceWanted w;
  if (o.wanted_rows != nullptr)
    for (int h = 0; h < storage.heads_q; ++h)
      for (int r = 0; r < seq.seqlen_q; ++r)
        w.rows.push_back(o.wanted_rows[static_cast<std::size_t>(h) * storage.seqlen_q + seq.q_begin + r]);
  if (o.wanted_cols != nullptr)
    for (int h = 0; h < storage.heads_kv; ++h)
      for (int k = 0; k < seq.seqlen_k; ++k)
        w.cols.push_back(o.wanted_cols[static_cast<std::size_t>(h) * storage.seqlen_k + seq.k_begin + k]);
  // A sequence with no wanted row (column) must not read as "all wanted".
  if (o.wanted_rows != nullptr && w.rows.empty()) w.rows.push_back(0);
  if (o.wanted_cols != nullptr && w.cols.empty()) w.cols.push_back(0);
  return w;
}

FlashBackwardParams sequence_backward_params(FlashTarget target, const FlashBackwardParams& p, const FlashOptions& o,
                                             const algo::SequenceSpan<int>& seq, float* lse_rows,
                                             const SequenceWanted& wanted) {
  FlashBackwardParams one = p;
  one.shape = sequence_shape(p.shape, o, seq);
  one.q = rows_from(p.q, seq.q_begin), one.o = rows_from(p.o, seq.q_begin), one.dout = rows_from(p.dout, seq.q_begin);
  one.dq = rows_from(p.dq, seq.q_begin);
  one.k = rows_from(p.k, seq.k_begin), one.v = rows_from(p.v, seq.k_begin);
  one.dk = rows_from(p.dk, seq.k_begin), one.dv = rows_from(p.dv, seq.k_begin);
  copy_rows(target, lse_rows, seq.seqlen_q, p.lse + seq.q_begin, p.shape.seqlen_q, seq.seqlen_q, p.shape.heads_q);
  one.lse = lse_rows;
  one.wanted = wanted.view();
  return one;
}

void copy_rows(FlashTarget target, float* dst, std::size_t dst_pitch, const float* src, std::size_t src_pitch,
               std::size_t width, std::size_t height) {
  if (width == 0 || height == 0) return;
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu)
    return gpu::copy_rows_on_device(dst, dst_pitch * sizeof(float), src, src_pitch * sizeof(float),
                                    width * sizeof(float), height);
#else
  (void)target;
#endif
  for (std::size_t r = 0; r < height; ++r) std::memcpy(dst + r * dst_pitch, src + r * src_pitch, width * sizeof(float));
}

SeqTensor seq_tensor(const FlashTensor& t) {
  return {static_cast<std::uint16_t*>(t.data), t.strides[0], t.strides[1], t.strides[2]};
}

FlashBackwardParams make_flash_backward_params(FlashDtype dtype, const FlashBackwardTensors& t,
                                               const FlashOptions& options) {
  FlashBackwardParams p;
  p.shape = make_flash_shape(dtype, t.q, t.k, options);
  p.q = seq_tensor(t.q), p.k = seq_tensor(t.k), p.v = seq_tensor(t.v), p.o = seq_tensor(t.o);
  p.dout = seq_tensor(t.dout);
  p.dq = seq_tensor(t.dq), p.dk = seq_tensor(t.dk), p.dv = seq_tensor(t.dv);
  p.lse = t.lse;
  p.wanted = {options.wanted_rows, options.wanted_cols};
  return p;
}

}  // namespace flashproof::kernels
