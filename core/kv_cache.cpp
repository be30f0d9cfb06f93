#include "core/kv_cache.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "core/generators.h"
#include "core/rng.h"

namespace flashproof {

CacheSlot cache_slot(const Problem& p, std::int64_t b, std::int64_t j) {
  if (!p.paged()) return {b, j};
  const std::int64_t entry = b * p.pages_per_sequence() + j / p.page_size;
  return {p.block_table[static_cast<std::size_t>(entry)], j % p.page_size};
}

std::vector<std::int64_t> page_table(std::int64_t batch, std::int64_t per_sequence, std::int64_t num_pages,
                                     std::uint64_t shuffle_seed) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(num_pages));
  for (std::int64_t x = 0; x < num_pages; ++x) order[static_cast<std::size_t>(x)] = x;
  if (shuffle_seed != 0) {  // Fisher-Yates with the project's RNG
    Rng rng(derive(shuffle_seed, static_cast<std::uint64_t>(InputStream::structure)));
    for (std::int64_t x = num_pages - 1; x > 0; --x)
      std::swap(order[static_cast<std::size_t>(x)], order[static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(x + 1)))]);
  }
  std::vector<std::int64_t> table(static_cast<std::size_t>(batch * per_sequence));
  for (std::size_t e = 0; e < table.size(); ++e) table[e] = order[e % order.size()];
  return table;
}

std::uint32_t unused_cache_bits(DType t) {
  switch (t) {
    case DType::fp16: return 0x7E01u;
    case DType::bf16: return 0x7FC1u;
    default: return 0x7FC00001u;
  }
}

namespace {
void copy_row(const HostTensor& from, std::int64_t a0, std::int64_t a1, HostTensor& to, std::int64_t b0,
              std::int64_t b1, std::int64_t heads, std::int64_t d) {
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t x = 0; x < d; ++x) to.set_bits(b0, b1, h, x, from.bits(a0, a1, h, x));
}
}  // namespace

KvCacheInputs cache_inputs(const ValidProblem& valid, const HostTensor& k, const HostTensor& v) {
  const Problem& p = valid;
  KvCacheInputs c{p, HostTensor(p.dtype, p.kv_shape()), HostTensor(p.dtype, p.kv_shape()), {}, {}};
  c.k.fill_storage_bits(unused_cache_bits(p.dtype));
  c.v.fill_storage_bits(unused_cache_bits(p.dtype));
  if (p.appends()) c.k_new = HostTensor(p.dtype, p.new_kv_shape()), c.v_new = HostTensor(p.dtype, p.new_kv_shape());
  std::int64_t row = 0;  // the logical key row
  for (std::int64_t b = 0; b < p.batch; ++b) {
    for (std::int64_t j = 0; j < p.stored_keys(b); ++j, ++row) {
      const CacheSlot s = cache_slot(p, b, j);
      copy_row(k, 0, row, c.k, s.first, s.second, p.heads_kv, p.head_dim);
      copy_row(v, 0, row, c.v, s.first, s.second, p.heads_kv, p.head_dim);
    }
    for (std::int64_t t = 0; t < p.seqlen_new; ++t, ++row) {
      copy_row(k, 0, row, c.k_new, b, t, p.heads_kv, p.head_dim);
      copy_row(v, 0, row, c.v_new, b, t, p.heads_kv, p.head_dim);
    }
  }
  return c;
}

void append_to_cache(const Problem& p, const HostTensor& k_new, const HostTensor& v_new, HostTensor& k_cache,
                     HostTensor& v_cache) {
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t t = 0; t < p.seqlen_new; ++t) {
      const CacheSlot s = cache_slot(p, b, p.stored_keys(b) + t);
      copy_row(k_new, b, t, k_cache, s.first, s.second, p.heads_kv, p.head_dim);
      copy_row(v_new, b, t, v_cache, s.first, s.second, p.heads_kv, p.head_dim);
    }
}

std::string cache_difference(const char* name, const HostTensor& after, const HostTensor& expected) {
  const Shape& sh = expected.shape();
  char hex[2][16];
  for (std::int64_t a = 0; a < sh[0]; ++a)
    for (std::int64_t b = 0; b < sh[1]; ++b)
      for (std::int64_t c = 0; c < sh[2]; ++c)
        for (std::int64_t d = 0; d < sh[3]; ++d)
          if (after.bits(a, b, c, d) != expected.bits(a, b, c, d)) {
            std::snprintf(hex[0], sizeof hex[0], "0x%x", after.bits(a, b, c, d));
            std::snprintf(hex[1], sizeof hex[1], "0x%x", expected.bits(a, b, c, d));
            return std::string(name) + "[" + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) + ", " +
                   std::to_string(d) + "] holds " + hex[0] + ", expected " + hex[1];
          }
  return {};
}

HostTensor logical_keys(const ValidProblem& valid, const HostTensor& cache) {
  const Problem& p = valid;
  const Problem l = logical_problem(p);
  HostTensor out(p.dtype, l.kv_shape());  // a sequence-free extra key (no key anywhere) stays 0
  std::int64_t row = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t j = 0; j < p.used_keys(b); ++j, ++row) {
      const CacheSlot s = cache_slot(p, b, j);
      copy_row(cache, s.first, s.second, out, 0, row, p.heads_kv, p.head_dim);
    }
  return out;
}

HostTensor cache_rows_view(const Problem& p, const HostTensor& logical) {
  const Shape& st = logical.strides();
  return logical.view({p.batch, p.seqlen_q, p.heads_q, logical.shape()[3]}, {p.seqlen_q * st[1], st[1], st[2], st[3]},
                      logical.offset());
}

HostTensor logical_rows_view(const HostTensor& rows) {
  const Shape& sh = rows.shape();
  const HostTensor r = rows.strides()[0] == sh[1] * rows.strides()[1] ? rows : rows.contiguous_copy();
  const Shape& st = r.strides();
  return r.view({1, sh[0] * sh[1], sh[2], sh[3]}, {sh[0] * sh[1] * st[1], st[1], st[2], st[3]}, r.offset());
}

HostTensor logical_lse(const Problem& p, const HostTensor& lse) {
  HostTensor out(DType::fp32, {1, p.heads_q, p.batch * p.seqlen_q, 1}, 3);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) out.set_bits(0, h, b * p.seqlen_q + i, 0, lse.bits(b, h, i, 0));
  return out;
}

void write_cache_lse(const Problem& p, const HostTensor& logical, HostTensor& lse) {
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i) lse.set_bits(b, h, i, 0, logical.bits(0, h, b * p.seqlen_q + i, 0));
}

void forward_through_logical(AttentionImpl& impl, const Problem& p, const ForwardArgs& a) {
  const ValidProblem valid(p);
  if (p.appends()) {
    if (a.append == nullptr) throw std::invalid_argument("forward_through_logical: the appended keys are missing");
    append_to_cache(p, a.append->k_new, a.append->v_new, a.append->k_cache, a.append->v_cache);
  }
  const Problem l = logical_problem(p);
  const HostTensor k = logical_keys(valid, a.k), v = logical_keys(valid, a.v);
  const HostTensor q = logical_rows_view(a.q);
  HostTensor o = poisoned_output(p.dtype, l.q_shape()), lse = poisoned_output(DType::fp32, l.lse_shape(), 3);
  impl.forward(l, ForwardArgs{q, k, v, o, lse, nullptr});
  const HostTensor rows = cache_rows_view(p, o);
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t i = 0; i < p.seqlen_q; ++i) copy_row(rows, b, i, a.o, b, i, p.heads_q, p.head_dim);
  write_cache_lse(p, lse, a.lse);
}

}  // namespace flashproof
