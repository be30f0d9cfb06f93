#include "kernels/fa1/api.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/params.h"
#include "kernels/flash/gpu_runtime.h"
#include "kernels/flash/targets.h"
#include "kernels/flash/validate.h"

namespace flashproof::kernels {

using algo::KernelFamily;

namespace {

// FA1's grid is one thread block per (batch, head), too few for a GPU unless batch * heads is large.
// Dealing the query blocks out to more blocks keeps every row's arithmetic unchanged (its key blocks
// still run in order in one thread block). The emulator gets a few, to keep host threads busy.
int automatic_query_splits(FlashTarget target, const FlashShape& s, int block_m) {
  int wanted = 8;
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) wanted = 2 * gpu::multiprocessor_count();
#else
  (void)target;
#endif
  const long long heads = static_cast<long long>(s.batch) * s.heads_q;
  const long long splits = (wanted + heads - 1) / heads;
  return static_cast<int>(std::clamp<long long>(splits, 1, (s.seqlen_q + block_m - 1) / block_m));
}

}  // namespace

bool fa1_bucket_built(int bucket) { return flash_limits(KernelFamily::fa1).bucket_built(bucket); }

std::string fa1_forward_error(FlashTarget target, const FlashForwardTensors& t, const FlashOptions& options) {
  return flash_forward_error(flash_limits(KernelFamily::fa1), target, t, options);
}

std::string fa1_backward_error(FlashTarget target, const FlashBackwardTensors& t, const FlashOptions& options) {
  return flash_backward_error(flash_limits(KernelFamily::fa1), target, t, options);
}

void fa1_forward(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options,
                 int query_splits) {
  if (std::string e = fa1_forward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  if (query_splits < 0) throw std::invalid_argument("fa1: query_splits must be >= 0 (0: automatic)");
  Fa1ForwardParams p;
  p.shape = make_flash_shape(dtype, t.q, t.k, options);
  p.q = seq_tensor(t.q), p.k = seq_tensor(t.k), p.v = seq_tensor(t.v), p.o = seq_tensor(t.o);
  p.lse = t.lse;
  const FlashShape& s = p.shape;
  const int bucket = algo::head_dim_bucket(KernelFamily::fa1, s.head_dim);
  const int block_m = algo::tile_config(KernelFamily::fa1, algo::Direction::forward, bucket, options.tiles).block_m;
  const auto splits_for = [&](const FlashShape& shape) {
    const int query_blocks = (shape.seqlen_q + block_m - 1) / block_m;
    return query_splits == 0 ? automatic_query_splits(target, shape, block_m) : std::min(query_splits, query_blocks);
  };
  const std::vector<algo::SequenceSpan<int>> sequences = packed_sequences(options);
  // The workspaces of one run: the whole call when dense, the longest sequence when packed.
  const int longest_q = sequences.empty() ? s.seqlen_q : longest_sequence(sequences).seqlen_q;
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * longest_q;
  FlashBuffer o_accum(target, rows * s.head_dim * sizeof(float));
  FlashBuffer row_max(target, rows * sizeof(float)), row_sum(target, rows * sizeof(float));
  p.o_accum = static_cast<float*>(o_accum.data());
  p.row_max = static_cast<float*>(row_max.data());
  p.row_sum = static_cast<float*>(row_sum.data());
  if (sequences.empty()) {
    p.query_splits = splits_for(s);
    flash::run_forward_on<KernelFamily::fa1>(target, p, bucket, options.tiles, /*workspace=*/true);
    return;
  }
  // Packed: each sequence alone (validate.h), with its own query splits.
  for_each_sequence_forward(target, p, options, sequences, [&](Fa1ForwardParams& one, const algo::SequenceSpan<int>&) {
    one.query_splits = splits_for(one.shape);
    flash::run_forward_on<KernelFamily::fa1>(target, one, bucket, options.tiles, /*workspace=*/true);
  });
}

void fa1_backward(FlashTarget target, FlashDtype dtype, const FlashBackwardTensors& t, const FlashOptions& options) {
  if (std::string e = fa1_backward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  FlashBackwardParams p = make_flash_backward_params(dtype, t, options);
  p.dq_mode = DqAccumulation::owned;
  const FlashShape& s = p.shape;
  const std::vector<algo::SequenceSpan<int>> sequences = packed_sequences(options);
  // The workspaces of one run: the whole call when dense, the longest sequence when packed.
  const int longest_q = sequences.empty() ? s.seqlen_q : longest_sequence(sequences).seqlen_q;
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * longest_q;
  FlashBuffer row_dot(target, rows * sizeof(float));
  FlashBuffer dq_accum(target, rows * s.head_dim * sizeof(float));
  p.row_dot = static_cast<float*>(row_dot.data());
  p.dq_accum = static_cast<float*>(dq_accum.data());
  const int bucket = algo::head_dim_bucket(KernelFamily::fa1, s.head_dim);
  if (sequences.empty()) {
    flash::run_backward_on<KernelFamily::fa1>(target, p, bucket, options.tiles);
    return;
  }
  FlashBuffer lse_rows(target, rows * sizeof(float));
  for (const algo::SequenceSpan<int>& seq : sequences) {
    const SequenceWanted wanted = sequence_wanted(options, s, seq);
    const FlashBackwardParams one =
        sequence_backward_params(target, p, options, seq, static_cast<float*>(lse_rows.data()), wanted);
    flash::run_backward_on<KernelFamily::fa1>(target, one, bucket, options.tiles);
  }
}

}  // namespace flashproof::kernels
