#include "kernels/fa2/api.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kernels/algo/block_ranges.h"
#include "kernels/algo/paged_kv.h"
#include "kernels/algo/split_kv.h"
#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/params.h"
#include "kernels/flash/targets.h"
#include "kernels/flash/validate.h"

namespace flashproof::kernels {

using algo::KernelFamily;

bool fa2_bucket_built(int bucket) { return flash_limits(KernelFamily::fa2).bucket_built(bucket); }

bool fa2_score_mod_built(int bucket) { return flash_limits(KernelFamily::fa2).score_mod_built(bucket); }

bool fa2_decode_built(int bucket) { return flash_limits(KernelFamily::fa2).decode_built(bucket); }

std::string fa2_forward_error(FlashTarget target, const FlashForwardTensors& t, const FlashOptions& options) {
  return flash_forward_error(flash_limits(KernelFamily::fa2), target, t, options);
}

std::string fa2_backward_error(FlashTarget target, const FlashBackwardTensors& t, const FlashOptions& options) {
  return flash_backward_error(flash_limits(KernelFamily::fa2), target, t, options);
}

namespace {
// The decode tile of a head dim (decode_kernel.h, Fa2DecodeTraitsFor): 64 rows, 128 keys up to
// bucket 64 and 64 above.
struct DecodeTile {
  int block_m, block_n;
};
DecodeTile decode_tile(int head_dim) {
  return {64, algo::head_dim_bucket(KernelFamily::fa2, head_dim) <= 64 ? 128 : 64};
}
// FlashAttention-2's GQA packing for decoding (fa2_decode below): one query row, no left window edge.
bool packs_group(int heads_q, int heads_kv, int seqlen_q, int window_left) {
  return seqlen_q == 1 && window_left < 0 && heads_q / heads_kv > 1;
}
}  // namespace

int fa2_decode_splits(int batch, int heads_q, int seqlen_q, int head_dim, std::span<const std::int32_t> cache_seqlens,
                      int capacity) {
  const auto [block_m, block_n] = decode_tile(head_dim);
  int longest = cache_seqlens.empty() ? capacity : 0;
  for (const std::int32_t used : cache_seqlens) longest = std::max(longest, static_cast<int>(used));
  const long long blocks = static_cast<long long>((seqlen_q + block_m - 1) / block_m) * batch * heads_q;
  return algo::decode_split_heuristic(blocks, (longest + block_n - 1) / block_n, kFa2DecodeSms, 128);
}

Fa2DecodeReads fa2_decode_reads(int heads_q, int heads_kv, int seqlen_q, int head_dim, int window_left, int window_right,
                                std::span<const std::int32_t> used_lengths, int num_splits) {
  Fa2DecodeReads r;
  const auto [block_m, block_n] = decode_tile(head_dim);
  // The launch's shape after the packing: a group's heads as the rows of one unmasked block.
  r.group_packed = packs_group(heads_q, heads_kv, seqlen_q, window_left);
  const int group = heads_q / heads_kv;
  const int rows = r.group_packed ? group : seqlen_q, heads_per_kv = r.group_packed ? 1 : group;
  if (r.group_packed) window_right = -1;
  const int batch = static_cast<int>(used_lengths.size());
  int longest = 0;
  for (const std::int32_t n : used_lengths) longest = std::max(longest, static_cast<int>(n));
  r.num_splits = num_splits > 0 ? num_splits
                                : fa2_decode_splits(batch, heads_kv * heads_per_kv, rows, head_dim, used_lengths, longest);
  double once = 0, never = 0, reads = 0, keys = 0;
  for (const std::int32_t used : used_lengths) {  // the same for every KV head of a sequence
    const algo::TileGeometry<int> g{block_m, block_n, rows, used, {used - rows, window_left, window_right}};
    const int key_blocks = algo::ceil_div(used, block_n);
    std::vector<int> count(static_cast<std::size_t>(key_blocks) + 1, 0);  // a difference array
    for (int m = 0; m < algo::ceil_div(rows, block_m); ++m)
      for (int split = 0; split < r.num_splits; ++split) {
        const algo::BlockRange<int> mine = algo::split_share(algo::key_blocks_for_query_block(g, m),
                                                             algo::split_key_blocks(key_blocks, r.num_splits, split));
        if (mine.end <= mine.begin) continue;
        count[static_cast<std::size_t>(mine.begin)] += heads_per_kv;
        count[static_cast<std::size_t>(mine.end)] -= heads_per_kv;
      }
    for (int kb = 0, c = 0; kb < key_blocks; ++kb) {
      c += count[static_cast<std::size_t>(kb)];
      const double n = std::min(block_n, used - kb * block_n);
      keys += n, reads += n * c, once += c == 1 ? n : 0, never += c == 0 ? n : 0;
    }
  }
  if (keys > 0) r.read_once = once / keys, r.never_read = never / keys, r.reads_per_key = reads / keys;
  return r;
}

namespace {

// A validated decode call (docs/fa2.md "Decoding"): lengths and table uploaded to target memory,
// the split count chosen, the split workspaces allocated, the decode kernel (and the combine) run.
void fa2_decode(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options) {
  const int capacity = static_cast<int>(decode_capacity(t, options));
  FlashTensor logical_k = t.k;
  logical_k.sizes = {t.q.sizes[0], capacity, t.k.sizes[2], t.k.sizes[3]};
  Fa2DecodeParams p;
  p.shape = make_flash_shape(dtype, t.q, logical_k, options);
  p.q = seq_tensor(t.q), p.k = seq_tensor(t.k), p.v = seq_tensor(t.v), p.o = seq_tensor(t.o);
  p.lse = t.lse;
  const FlashShape& s = p.shape;
  std::unique_ptr<FlashBuffer> seqlens, table, partial_o, partial_lse;
  // With appended keys the kernels take the lengths after the append (validated to fit the
  // capacity) and fa2_append_kernel writes the new keys first (decode_kernel.h).
  std::vector<std::int32_t> used(options.cache_seqlens.begin(), options.cache_seqlens.end());
  if (t.k_new.data != nullptr) {
    p.cache.seqlen_new = static_cast<int>(t.k_new.sizes[1]);
    p.cache.k_new = seq_tensor(t.k_new), p.cache.v_new = seq_tensor(t.v_new);
    for (std::int32_t& n : used) n += p.cache.seqlen_new;
  }
  if (!used.empty()) {
    seqlens = std::make_unique<FlashBuffer>(target, used.size() * sizeof(std::int32_t));
    seqlens->upload(used.data(), used.size() * sizeof(std::int32_t));
    p.cache.seqlens = static_cast<const std::int32_t*>(seqlens->data());
  }
  if (options.page_size > 0) {
    table = std::make_unique<FlashBuffer>(target, options.block_table.size_bytes());
    table->upload(options.block_table.data(), options.block_table.size_bytes());
    p.cache.block_table = static_cast<const std::int32_t*>(table->data());
    p.cache.page_size = options.page_size;
    p.cache.pages_per_sequence = static_cast<int>(options.block_table.size() / static_cast<std::size_t>(s.batch));
  }
  // FlashAttention-2's GQA packing for decoding: with one query row and no left window edge, the
  // row sees every used key, so the group's query heads can be the rows of one block (row r =
  // query head kv_head * group + r, query 0) of a problem with seqlen_q = group, heads_q =
  // heads_kv and no mask: the rows' arithmetic is unchanged (bitwise), K and V are read once per
  // group instead of once per query head. Q and O are the same storage with the head stride as
  // the row stride; LSE's index (b * heads_q + h) * 1 is the packed shape's (b * heads_kv + kv)
  // * group + r.
  if (const int group = p.shape.heads_q / p.shape.heads_kv;
      packs_group(p.shape.heads_q, p.shape.heads_kv, p.shape.seqlen_q, p.shape.window_left)) {
    p.shape.seqlen_q = group;
    p.shape.heads_q = p.shape.heads_kv;
    p.shape.window_right = -1;
    for (SeqTensor* x : {&p.q, &p.o}) {
      x->row_stride = x->head_stride;
      x->head_stride *= group;
    }
  }
  p.cache.num_splits = options.num_splits > 0 ? options.num_splits
                                               : fa2_decode_splits(s.batch, s.heads_q, s.seqlen_q, s.head_dim,
                                                                   used, capacity);
  p.cache.flaw = static_cast<DecodeFlaw>(options.decode_flaw);
  if (p.cache.num_splits > 1) {
    const std::size_t rows = static_cast<std::size_t>(p.cache.num_splits) * s.batch * s.heads_q * s.seqlen_q;
    partial_o = std::make_unique<FlashBuffer>(target, rows * s.head_dim * sizeof(float));
    partial_lse = std::make_unique<FlashBuffer>(target, rows * sizeof(float));
    p.cache.partial_o = static_cast<float*>(partial_o->data());
    p.cache.partial_lse = static_cast<float*>(partial_lse->data());
  }
  flash::run_fa2_decode_on(target, p, algo::head_dim_bucket(KernelFamily::fa2, s.head_dim));
}

}  // namespace

void fa2_forward(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options) {
  if (std::string e = fa2_forward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  if (options.decode()) return fa2_decode(target, dtype, t, options);
  Fa2ForwardParams p;
  p.shape = make_flash_shape(dtype, t.q, t.k, options);
  p.q = seq_tensor(t.q), p.k = seq_tensor(t.k), p.v = seq_tensor(t.v), p.o = seq_tensor(t.o);
  p.lse = t.lse;
  p.wanted = {options.wanted_rows, options.wanted_cols};
  std::unique_ptr<FlashBuffer> slopes;  // ALiBi's slopes in target memory, for the call
  p.mod = make_score_mod_params(target, options, slopes);
  const int bucket = algo::head_dim_bucket(KernelFamily::fa2, p.shape.head_dim);
  const std::vector<algo::SequenceSpan<int>> sequences = packed_sequences(options);
  if (sequences.empty()) {
    flash::run_forward_on<KernelFamily::fa2>(target, p, bucket, options.tiles, /*workspace=*/false);
    return;
  }
  // Packed: each sequence alone (validate.h), with its share of the wanted outputs.
  for_each_sequence_forward(target, p, options, sequences, [&](Fa2ForwardParams& one, const algo::SequenceSpan<int>& seq) {
    const SequenceWanted wanted = sequence_wanted(options, p.shape, seq);
    one.wanted = wanted.view();
    flash::run_forward_on<KernelFamily::fa2>(target, one, bucket, options.tiles, /*workspace=*/true);
  });
}

void fa2_backward(FlashTarget target, FlashDtype dtype, const FlashBackwardTensors& t, const FlashOptions& options) {
  if (std::string e = fa2_backward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  FlashBackwardParams p = make_flash_backward_params(dtype, t, options);
  p.dq_mode = options.deterministic ? DqAccumulation::slices : DqAccumulation::atomic;
  std::unique_ptr<FlashBuffer> slopes;  // ALiBi's slopes in target memory, for the call
  p.mod = make_score_mod_params(target, options, slopes);
  const int bucket = algo::head_dim_bucket(KernelFamily::fa2, p.shape.head_dim);
  const std::vector<algo::SequenceSpan<int>> sequences = packed_sequences(options);
  // The workspaces of one run: the whole call when dense, the longest sequence when packed.
  const algo::SequenceSpan<int> longest =
      sequences.empty() ? algo::SequenceSpan<int>{0, p.shape.seqlen_q, 0, p.shape.seqlen_k} : longest_sequence(sequences);
  const FlashShape& s = p.shape;
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * longest.seqlen_q;
  // Deterministic mode keeps one dQ slice per key block of the backward's tile shape.
  const int block_n = algo::tile_config(KernelFamily::fa2, algo::Direction::backward, bucket, options.tiles).block_n;
  const std::size_t splits =
      options.deterministic ? static_cast<std::size_t>((longest.seqlen_k + block_n - 1) / block_n) : 1;
  FlashBuffer row_dot(target, rows * sizeof(float));
  FlashBuffer dq_accum(target, splits * rows * s.head_dim * sizeof(float));
  p.row_dot = static_cast<float*>(row_dot.data());
  p.dq_accum = static_cast<float*>(dq_accum.data());
  if (sequences.empty()) {
    flash::run_backward_on<KernelFamily::fa2>(target, p, bucket, options.tiles);
    return;
  }
  FlashBuffer lse_rows(target, rows * sizeof(float));
  for (const algo::SequenceSpan<int>& seq : sequences) {
    const SequenceWanted wanted = sequence_wanted(options, p.shape, seq);
    const FlashBackwardParams one =
        sequence_backward_params(target, p, options, seq, static_cast<float*>(lse_rows.data()), wanted);
    flash::run_backward_on<KernelFamily::fa2>(target, one, bucket, options.tiles);
  }
}

}  // namespace flashproof::kernels
