#include "kernels/naive/naive_attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/kv_cache.h"
#include "core/parallel.h"
#include "kernels/algo/row_keys.h"
#include "kernels/algo/score_mod.h"

namespace flashproof {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The rounding a framework applies when it stores an fp32 intermediate in the dtype.
float to_dtype(DType t, float x) { return static_cast<float>(round_to(t, x)); }

// A float copy of a [b, s, h, d] tensor as contiguous rows [b][h][s][d]. Exact (every fp16, bf16
// and fp32 value is a float), and read in the same order as the tensor would be, so the results
// are those of reading the tensor element by element, without the per-element indexing.
struct FloatRows {
  std::int64_t batch, heads, seqlen, dim;
  std::vector<float> data;
  explicit FloatRows(const HostTensor& t)
      : batch(t.shape()[0]), heads(t.shape()[2]), seqlen(t.shape()[1]), dim(t.shape()[3]), data(t.numel()) {
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t s = 0; s < seqlen; ++s)
        for (std::int64_t h = 0; h < heads; ++h) t.read_row(b, s, h, data.data() + ((b * heads + h) * seqlen + s) * dim);
  }
  const float* row(std::int64_t b, std::int64_t h, std::int64_t s) const {
    return data.data() + ((b * heads + h) * seqlen + s) * dim;
  }
};

// The same rows transposed per head, [b][h][d][s], for the loops that run over keys with the
// head-dim index fixed (P V and dS K).
struct FloatColumns {
  std::int64_t heads, seqlen, dim;
  std::vector<float> data;
  explicit FloatColumns(const FloatRows& r) : heads(r.heads), seqlen(r.seqlen), dim(r.dim), data(r.data.size()) {
    for (std::int64_t b = 0; b < r.batch; ++b)
      for (std::int64_t h = 0; h < heads; ++h)
        for (std::int64_t s = 0; s < seqlen; ++s)
          for (std::int64_t c = 0; c < dim; ++c) data[((b * heads + h) * dim + c) * seqlen + s] = r.row(b, h, s)[c];
  }
  const float* column(std::int64_t b, std::int64_t h, std::int64_t c) const {
    return data.data() + ((b * heads + h) * dim + c) * seqlen;
  }
};

// Four float lanes (GCC/Clang vector extension, one SSE register). The loops below run
// independent sums side by side, one per lane, each with the same operations in the same order as
// the scalar loop it replaces (a product rounded to float, then a float add), so the results are
// bit for bit those of the scalar loops; only the waiting between the sums goes.
using Lanes4f = float __attribute__((vector_size(16)));
constexpr std::int64_t kLanes = 4;
inline Lanes4f load4(const float* p) {
  Lanes4f x;
  std::memcpy(&x, p, sizeof x);
  return x;
}
inline void store4(float* p, Lanes4f x) { std::memcpy(p, &x, sizeof x); }

// out[j] = sum_c a[c] * cols[c][j] for j in [0, n), c in order (dot products of `a` with n rows
// given as columns): four rows at a time, the rest one by one.
void dots_with_columns(const float* a, const FloatColumns& cols, std::int64_t b, std::int64_t h,
                       std::int64_t dim, std::int64_t n, float* out) {
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Lanes4f acc = {};
    for (std::int64_t c = 0; c < dim; ++c) acc += a[c] * load4(cols.column(b, h, c) + j);
    store4(out + j, acc);
  }
  for (; j < n; ++j) {
    float acc = 0.f;
    for (std::int64_t c = 0; c < dim; ++c) acc += a[c] * cols.column(b, h, c)[j];
    out[j] = acc;
  }
}

// out[c] = sum over keys j in `order` with used[j] of w[j] * rows(j)[c], for c in [0, dim): four
// columns at a time, the rest one by one (the wfoured sums P V and dS K).
template <class Rows>
void weighted_row_sums(const std::vector<std::int64_t>& order, const std::vector<char>& used,
                       const float* w, const Rows& row, std::int64_t dim, float* out) {
  std::int64_t c = 0;
  for (; c + kLanes <= dim; c += kLanes) {
    Lanes4f acc = {};
    for (std::int64_t j : order)
      if (used[j]) acc += w[j] * load4(row(j) + c);
    store4(out + c, acc);
  }
  for (; c < dim; ++c) {
    float acc = 0.f;
    for (std::int64_t j : order)
      if (used[j]) acc += w[j] * row(j)[c];
    out[c] = acc;
  }
}

// The keys the flaw's rows see: the problem's, or those of mask_off_by_one's wider window, or for
// packed_ignores_sequences the dense window over the whole storage (another sequence's keys).
algo::RowKeys flawed_keys(const Problem& p, NaiveFlaw flaw) {
  if (flaw == NaiveFlaw::mask_off_by_one && p.window_right >= 0)
    return algo::RowKeys(p, p.window_left, std::min(p.window_right, std::numeric_limits<std::int64_t>::max() - 1) + 1);
  if (flaw == NaiveFlaw::packed_ignores_sequences && p.packed()) {
    Problem dense = p;
    dense.cu_seqlens_q.clear(), dense.cu_seqlens_k.clear();
    return algo::RowKeys(dense);
  }
  return algo::RowKeys(p);
}

struct RowContext {
  const Problem& p;
  algo::RowKeys keys;
  algo::RowKeys alibi_keys;  // whose distances ALiBi uses (alibi_top_left: top-left aligned)
  float scale;
  // The soft cap in natural units (algo/score_mod.h with log2 e = 1): x -> c tanh(x * fl(1/c)).
  float cap = 0, inv_cap = 0;
  NaiveFlaw flaw;
  // The dtype-scores baseline (make_dtype_scores_baseline): the rows it is given are q * scale
  // rounded to the dtype, and each score q'.k is rounded to the dtype (and again after the cap and
  // bias), as FlashAttention's tests' reference computes in the dtype.
  bool dtype_scores = false;
  RowContext(const Problem& problem, NaiveFlaw f, bool dtype = false)
      : p(problem), keys(flawed_keys(problem, f)),
        alibi_keys(problem, f == NaiveFlaw::alibi_top_left ? algo::RowKeys::Align::top_left
                                                           : algo::RowKeys::Align::bottom_right),
        scale(problem.softmax_scale()), flaw(f), dtype_scores(dtype) {
    if (p.softcap) cap = *p.softcap, inv_cap = f == NaiveFlaw::softcap_unscaled_argument ? 1.0f : 1.0f / cap;
  }

  // The logit of scaled product x of row i, key j of head h (algo/score_mod.h); the cap's tanh
  // value, for the backward's 1 - t^2, into *t (0 without a cap).
  float modified(float x, std::int64_t h, std::int64_t i, std::int64_t j, float* t) const {
    *t = 0;
    if (cap != 0) {
      *t = algo::soft_cap_tanh(x, inv_cap);
      x = cap * *t;
    }
    if (p.alibi()) {
      const float bias = algo::alibi_bias(p.alibi_slopes[h], static_cast<float>(alibi_keys.alibi_distance(i, j)));
      x = flaw == NaiveFlaw::alibi_wrong_sign ? x - bias : x + bias;
    }
    return x;
  }

  std::int64_t kv_head(std::int64_t h) const {
    return flaw == NaiveFlaw::wrong_gqa_head ? h % p.heads_kv : p.kv_head(h);
  }


  // P of one query row, rounded to the dtype as a framework stores it; returns LSE (+inf when the
  // row sees no key, P then all zero).
  // With a soft cap, tanh receives each visible key's tanh value (for the backward).
  float softmax_row(const FloatRows& q, const FloatColumns& kt, std::int64_t b, std::int64_t h,
                    std::int64_t i, std::vector<float>& prob, std::vector<float>* tanh = nullptr) const {
    const std::int64_t hk = kv_head(h);
    prob.assign(p.seqlen_k, 0.f);
    float m = -kInf;
    // Every key's dot product (the masked ones' are dropped below: they only cost time).
    dots_with_columns(q.row(b, h, i), kt, b, hk, p.head_dim, p.seqlen_k, prob.data());
    const algo::KeyRange<std::int64_t> seen = keys.of_row(i);
    for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
      if (!seen.contains(j)) {
        prob[j] = -kInf;
        continue;
      }
      prob[j] = dtype_scores ? to_dtype(p.dtype, prob[j]) : prob[j] * scale;
      if (p.score_mod()) {
        float t;
        prob[j] = modified(prob[j], h, i, j, &t);
        if (dtype_scores) prob[j] = to_dtype(p.dtype, prob[j]);
        if (tanh) (*tanh)[j] = t;
      }
      m = std::max(m, prob[j]);
    }
    if (m == -kInf) {
      if (flaw == NaiveFlaw::nan_on_empty_row) {  // exp(-inf - -inf) / 0, as an unguarded kernel
        prob.assign(p.seqlen_k, std::numeric_limits<float>::quiet_NaN());
        return std::numeric_limits<float>::quiet_NaN();
      }
      prob.assign(p.seqlen_k, 0.f);
      return kInf;
    }
    float l = 0.f;
    if (flaw == NaiveFlaw::missing_rescale || flaw == NaiveFlaw::shipped_tiles_skip_rescale) {
      // Weights relative to the running max of the 16-key blocks seen so far, never rescaled.
      float running = -kInf;
      for (std::int64_t j0 = 0; j0 < p.seqlen_k; j0 += 16) {
        const std::int64_t j1 = std::min<std::int64_t>(j0 + 16, p.seqlen_k);
        for (std::int64_t j = j0; j < j1; ++j) running = std::max(running, prob[j]);
        for (std::int64_t j = j0; j < j1; ++j) {
          prob[j] = running == -kInf ? 0.f : std::exp(prob[j] - running);
          l += prob[j];
        }
      }
    } else {
      for (float& s : prob) {
        s = std::exp(s - m);
        l += s;
      }
    }
    for (float& s : prob) s = to_dtype(p.dtype, s / l);
    return flaw == NaiveFlaw::wrong_lse ? m : m + std::log(l);
  }
};

// The outputs a call computes (ForwardArgs::wanted): a sample's rows and columns, every one without
// a sample. What a wanted output is computed from does not depend on which others are wanted, so
// its bits are those of the full run.
struct WantedOutputs {
  const Problem& p;
  const OutputSample* sample;
  WantedOutputs(const Problem& problem, const OutputSample* s) : p(problem), sample(s) {
    if (s && (static_cast<std::int64_t>(s->rows.size()) != p.batch * p.heads_q * p.seqlen_q ||
              static_cast<std::int64_t>(s->cols.size()) != p.batch * p.heads_kv * p.seqlen_k))
      throw std::invalid_argument("naive: the sample's rows and columns do not match the problem");
  }
  bool row(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return !sample || sample->row((b * p.heads_q + h) * p.seqlen_q + i);
  }
  // The wanted query rows as flat [b][hq][sq] indices, in order.
  std::vector<std::int64_t> rows() const {
    std::vector<std::int64_t> out;
    for (std::int64_t r = 0; r < p.batch * p.heads_q * p.seqlen_q; ++r)
      if (!sample || sample->row(r)) out.push_back(r);
    return out;
  }
  // The wanted key columns j of kv head hk of batch entry b, in order.
  std::vector<std::int64_t> columns(std::int64_t b, std::int64_t hk) const {
    std::vector<std::int64_t> out;
    for (std::int64_t j = 0; j < p.seqlen_k; ++j)
      if (!sample || sample->col((b * p.heads_kv + hk) * p.seqlen_k + j)) out.push_back(j);
    return out;
  }
};

// q * scale rounded to the dtype (the dtype-scores baseline's query rows), or q itself.
FloatRows query_rows(const HostTensor& q, const Problem& p, bool dtype_scores) {
  FloatRows rows(q);
  if (dtype_scores)
    for (float& x : rows.data) x = to_dtype(p.dtype, x * p.softmax_scale());
  return rows;
}

class NaiveAttention final : public AttentionImpl {
 public:
  explicit NaiveAttention(NaiveFlaw flaw, bool dtype_scores = false) : flaw_(flaw), dtype_scores_(dtype_scores) {}
  std::string name() const override {
    if (dtype_scores_) return "naive-dtype-scores";
    return flaw_ == NaiveFlaw::none ? "naive" : std::string("naive-flawed:") + naive_flaw_name(flaw_);
  }
  bool bitwise_reproducible_backward() const override { return true; }
  Support declared_support() const override {  // everything: packed batches, soft cap, ALiBi, caches
    Support s;
    s.packed = s.softcap = s.alibi = s.kv_cache = s.paged = s.kv_append = true;
    return s;
  }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  std::unique_ptr<AttentionImpl> with_alternate_tiles() const override {
    if (flaw_ == NaiveFlaw::alternate_tiles_skip_rescale) return make_naive_attention(NaiveFlaw::missing_rescale);
    if (flaw_ == NaiveFlaw::shipped_tiles_skip_rescale) return make_naive_attention(NaiveFlaw::none);
    return nullptr;  // the baseline has no tiles
  }
  std::string description() const override {
    if (dtype_scores_) return "attention computed in the dtype (scores rounded to it); the second tier's baseline";
    return "naive same-dtype attention on the host (fp32 scores and softmax, P rounded to the "
           "dtype); the accuracy baseline";
  }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const Problem&, bool) const override { return {}; }

  void forward(const Problem& p, const ForwardArgs& a) override {
    if (p.kv_cache()) {  // the logical problem's attention, the keys read through the cache
      Problem read = p;
      if (flaw_ == NaiveFlaw::cache_allocated_length)  // (with appended keys: appended at the capacity's end)
        read.cache_seqlens.assign(static_cast<std::size_t>(p.batch), p.seqlen_k - p.seqlen_new);
      if (flaw_ == NaiveFlaw::pages_in_order && p.paged()) read.block_table = page_table(p.batch, p.pages_per_sequence(), p.num_pages, 0);
      forward_through_logical(*this, read, a);
      if (flaw_ == NaiveFlaw::later_sequences_unwritten)
        for (std::int64_t b = 1; b < p.batch; ++b)
          for (std::int64_t h = 0; h < p.heads_q; ++h)
            for (std::int64_t i = 0; i < p.seqlen_q; ++i) {
              a.lse.set_bits(b, h, i, 0, output_poison_bits(DType::fp32));
              for (std::int64_t x = 0; x < p.head_dim; ++x) a.o.set_bits(b, i, h, x, output_poison_bits(p.dtype));
            }
      return;
    }
    const RowContext ctx(p, flaw_, dtype_scores_);
    const bool flip = flip_order(p, forward_calls_);
    const FloatRows q = query_rows(a.q, p, dtype_scores_), v(a.v);
    const FloatColumns kt(FloatRows(a.k));
    const std::vector<std::int64_t> rows = WantedOutputs(p, a.wanted).rows();  // the others stay untouched
    parallel_for(static_cast<std::int64_t>(rows.size()), [&](std::int64_t x) {
      const std::int64_t r = rows[x];
      const std::int64_t i = r % p.seqlen_q, h = (r / p.seqlen_q) % p.heads_q,
                         b = r / (p.seqlen_q * p.heads_q);
      std::vector<float> prob, o(p.head_dim);
      const float lse = ctx.softmax_row(q, kt, b, h, i, prob);
      const std::int64_t hk = ctx.kv_head(h);
      const bool reverse = flip || (flaw_ == NaiveFlaw::odd_rows_reversed && i % 2 == 1);
      std::vector<char> used(p.seqlen_k);  // masked keys are skipped: 0 * V is NaN where V is
      std::vector<std::int64_t> order(p.seqlen_k);
      const algo::KeyRange<std::int64_t> seen = ctx.keys.of_row(i);
      for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
        used[j] = seen.contains(j) || flaw_ == NaiveFlaw::multiplies_masked;
        order[j] = reverse ? p.seqlen_k - 1 - j : j;
      }
      weighted_row_sums(order, used, prob.data(), [&](std::int64_t j) { return v.row(b, hk, j); }, p.head_dim,
                        o.data());
      for (std::int64_t c = 0; c < p.head_dim; ++c) {
        float acc = o[c];
        if (flaw_ == NaiveFlaw::saturating_output) acc = std::clamp(acc, -2.f, 2.f);
        a.o.set(b, i, h, c, acc);
      }
      a.lse.set(b, h, i, 0, lse);
    });
  }

  void backward(const Problem& p, const BackwardArgs& a) override {
    const RowContext ctx(p, flaw_, dtype_scores_);
    const WantedOutputs wanted(p, a.wanted);
    const bool reverse = flip_order(p, backward_calls_);
    const float scale = ctx.scale;
    const std::int64_t sq = p.seqlen_q, sk = p.seqlen_k, d = p.head_dim, g = p.group_size();
    const FloatRows q = query_rows(a.q, p, dtype_scores_), k(a.k), v(a.v), dout(a.dout);
    const FloatColumns kt(k), vt(v);
    // One work item per (batch, kv head): it owns dK/dV of that head and dQ of its query heads.
    parallel_for(p.batch * p.heads_kv, [&](std::int64_t r) {
      const std::int64_t hk = r % p.heads_kv, b = r / p.heads_kv;
      // dK, dV of the wanted keys only; a row is needed for its own dQ or for a wanted key it sees
      // (dS_ij needs the whole row's P and D_i), and then its P, dP and D once for all those keys.
      const std::vector<std::int64_t> keys = wanted.columns(b, hk);
      std::vector<float> dk(sk * d, 0.f), dv(sk * d, 0.f), prob, ds(sk), dq(d), tanh(sk);
      std::vector<std::int64_t> order(sk);
      for (std::int64_t j = 0; j < sk; ++j) order[j] = reverse ? sk - 1 - j : j;
      for (std::int64_t h = hk * g; h < (hk + 1) * g; ++h) {
        for (std::int64_t i = 0; i < sq; ++i) {
          // The flawed dK keeps only the last query head's share (its first row overwrites).
          const bool overwrite_dk = flaw_ == NaiveFlaw::dk_without_group_sum && i == 0;
          const bool dq_wanted = wanted.row(b, h, i);
          const algo::KeyRange<std::int64_t> row_keys = ctx.keys.of_row(i);
          if (!dq_wanted && std::none_of(keys.begin(), keys.end(), [&](std::int64_t j) { return row_keys.contains(j); })) {
            if (overwrite_dk)  // as below for keys the row does not see
              for (std::int64_t j : keys) std::fill(dk.data() + j * d, dk.data() + (j + 1) * d, 0.f);
            continue;
          }
          ctx.softmax_row(q, kt, b, h, i, prob, &tanh);
          const float *qi = q.row(b, h, i), *doi = dout.row(b, h, i);
          // Masked pairs are skipped rather than multiplied by a zero weight, so that whatever K
          // and V hold there (NaN, say) does not reach dQ, dK, dV.
          dots_with_columns(doi, vt, b, hk, d, sk, ds.data());  // dP_ij (masked ones dropped below)
          float dsum = 0.f;  // D_i = sum_j P_ij dP_ij
          for (std::int64_t j = 0; j < sk; ++j) {
            if (!row_keys.contains(j)) {
              ds[j] = 0.f;
              continue;
            }
            ds[j] = to_dtype(p.dtype, ds[j]);
            dsum += prob[j] * ds[j];
          }
          for (std::int64_t j = 0; j < sk; ++j)
            if (row_keys.contains(j)) ds[j] = to_dtype(p.dtype, prob[j] * (ds[j] - dsum));
          // Through the cap: dS times 1 - t^2 (in fp32), stored in the dtype again.
          if (p.softcap && flaw_ != NaiveFlaw::softcap_missing_derivative)
            for (std::int64_t j = 0; j < sk; ++j)
              if (row_keys.contains(j)) ds[j] = to_dtype(p.dtype, ds[j] * algo::soft_cap_derivative(tanh[j]));
          std::vector<char> seen(sk);
          for (std::int64_t j = 0; j < sk; ++j) seen[j] = row_keys.contains(j);
          if (dq_wanted) {
            weighted_row_sums(order, seen, ds.data(), [&](std::int64_t j) { return k.row(b, hk, j); }, d, dq.data());
            // The dtype-scores baseline: the gradient of q' = q * scale rounded, then scaled.
            for (std::int64_t c = 0; c < d; ++c)
              a.dq.set(b, i, h, c, dtype_scores_ ? to_dtype(p.dtype, dq[c]) * scale : dq[c] * scale);
          }
          for (std::int64_t j : keys) {
            float *dkj = dk.data() + j * d, *dvj = dv.data() + j * d;
            if (!seen[j]) {
              if (overwrite_dk) std::fill(dkj, dkj + d, 0.f);
              continue;
            }
            const float dsj = ds[j], pj = prob[j];
            if (overwrite_dk)
              for (std::int64_t c = 0; c < d; ++c) dkj[c] = dsj * qi[c];
            else
              for (std::int64_t c = 0; c < d; ++c) dkj[c] += dsj * qi[c];
            for (std::int64_t c = 0; c < d; ++c) dvj[c] += pj * doi[c];
          }
        }
      }
      for (std::int64_t j : keys)
        for (std::int64_t c = 0; c < d; ++c) {
          a.dk.set(b, j, hk, c, dtype_scores_ ? dk[j * d + c] : dk[j * d + c] * scale);  // q' holds the scale
          a.dv.set(b, j, hk, c, dv[j * d + c]);
        }
    });
  }

 private:
  // The flaws that change the summation order for a whole call (alternating: every other forward,
  // and independently every other backward).
  bool flip_order(const Problem& p, std::atomic<std::uint64_t>& calls) const {
    if (flaw_ == NaiveFlaw::alternating_order) return (calls.fetch_add(1) % 2) == 1;
    return flaw_ == NaiveFlaw::batch_dependent_order && p.batch > 1;
  }
  NaiveFlaw flaw_;
  bool dtype_scores_;
  std::atomic<std::uint64_t> forward_calls_{0}, backward_calls_{0};
};

}  // namespace

const char* naive_flaw_name(NaiveFlaw flaw) {
  switch (flaw) {
    case NaiveFlaw::none: return "none";
    case NaiveFlaw::mask_off_by_one: return "mask-off-by-one";
    case NaiveFlaw::packed_ignores_sequences: return "packed-ignores-sequences";
    case NaiveFlaw::softcap_missing_derivative: return "softcap-missing-derivative";
    case NaiveFlaw::softcap_unscaled_argument: return "softcap-unscaled-argument";
    case NaiveFlaw::alibi_top_left: return "alibi-top-left";
    case NaiveFlaw::cache_allocated_length: return "cache-allocated-length";
    case NaiveFlaw::later_sequences_unwritten: return "later-sequences-unwritten";
    case NaiveFlaw::pages_in_order: return "pages-in-order";
    case NaiveFlaw::alibi_wrong_sign: return "alibi-wrong-sign";
    case NaiveFlaw::missing_rescale: return "missing-rescale";
    case NaiveFlaw::wrong_lse: return "wrong-lse";
    case NaiveFlaw::dk_without_group_sum: return "dk-without-group-sum";
    case NaiveFlaw::nan_on_empty_row: return "nan-on-empty-row";
    case NaiveFlaw::odd_rows_reversed: return "odd-rows-reversed";
    case NaiveFlaw::alternating_order: return "alternating-order";
    case NaiveFlaw::batch_dependent_order: return "batch-dependent-order";
    case NaiveFlaw::wrong_gqa_head: return "wrong-gqa-head";
    case NaiveFlaw::saturating_output: return "saturating-output";
    case NaiveFlaw::multiplies_masked: return "multiplies-masked";
    case NaiveFlaw::alternate_tiles_skip_rescale: return "alternate-tiles-skip-rescale";
    case NaiveFlaw::shipped_tiles_skip_rescale: return "shipped-tiles-skip-rescale";
  }
  return "?";
}

std::unique_ptr<AttentionImpl> make_naive_attention(NaiveFlaw flaw) { return std::make_unique<NaiveAttention>(flaw); }

std::unique_ptr<AttentionImpl> make_dtype_scores_baseline() {
  return std::make_unique<NaiveAttention>(NaiveFlaw::none, true);
}

std::unique_ptr<AttentionImpl> make_flawed_naive(std::string_view impl_name) {
  for (NaiveFlaw flaw : kNaiveFlaws)
    if (impl_name == std::string("naive-flawed:") + naive_flaw_name(flaw)) return make_naive_attention(flaw);
  for (NaiveFlaw flaw : kNaiveFeatureFlaws)
    if (impl_name == std::string("naive-flawed:") + naive_flaw_name(flaw)) return make_naive_attention(flaw);
  return nullptr;
}

}  // namespace flashproof
