#include "kernels/fa2/api.h"

#include <cstddef>
#include <stdexcept>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/targets.h"
#include "kernels/flash/gpu_runtime.h"
#include "kernels/flash/validate.h"

#ifndef FLASHPROOF_FA2_BUCKETS
#define FLASHPROOF_FA2_BUCKETS 0xFF  // every head-dim bucket (CMake: FLASHPROOF_FA2_HEAD_DIMS)
#endif

namespace flashproof::kernels {

bool fa2_bucket_built(int bucket) {
  for (int i = 0; i < 8; ++i)
    if (algo::kHeadDimBuckets[i] == bucket) return ((FLASHPROOF_FA2_BUCKETS >> i) & 1) != 0;
  return false;
}

const FlashKernelLimits& fa2_limits() {
  static constexpr FlashKernelLimits limits{"fa2", &algo::head_dim_bucket, &fa2_bucket_built,
                                            "FLASHPROOF_FA2_HEAD_DIMS"};
  return limits;
}

int fa2_backward_block_n(int head_dim_bucket, algo::TileSet tiles) {
  return algo::tile_config("fa2", "backward", head_dim_bucket, tiles).block_n;
}

std::string fa2_forward_error(FlashTarget target, const FlashForwardTensors& t, const FlashOptions& options) {
  return flash_forward_error(fa2_limits(), target, t, options);
}

std::string fa2_backward_error(FlashTarget target, const FlashBackwardTensors& t, const FlashOptions& options) {
  return flash_backward_error(fa2_limits(), target, t, options);
}

void fa2_forward(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options) {
  if (std::string e = fa2_forward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  Fa2ForwardParams p;
  p.shape = make_flash_shape(dtype, t.q, t.k, options);
  p.q = seq_tensor(t.q), p.k = seq_tensor(t.k), p.v = seq_tensor(t.v), p.o = seq_tensor(t.o);
  p.lse = t.lse;
  p.wanted = {options.wanted_rows, options.wanted_cols};
  const int bucket = algo::head_dim_bucket(p.shape.head_dim);
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) return gpu::fa2_run_forward(p, bucket, options.tiles);
#endif
  emulated::fa2_run_forward(p, bucket, options.tiles);
}

void fa2_backward(FlashTarget target, FlashDtype dtype, const FlashBackwardTensors& t, const FlashOptions& options) {
  if (std::string e = fa2_backward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  FlashBackwardParams p = make_flash_backward_params(dtype, t, options);
  p.dq_mode = options.deterministic ? DqAccumulation::slices : DqAccumulation::atomic;
  const int bucket = algo::head_dim_bucket(p.shape.head_dim);
  const FlashShape& s = p.shape;
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * s.seqlen_q;
  const int block_n = fa2_backward_block_n(bucket, options.tiles);
  const std::size_t splits = options.deterministic ? static_cast<std::size_t>((s.seqlen_k + block_n - 1) / block_n) : 1;
  FlashBuffer row_dot(target, rows * sizeof(float));
  FlashBuffer dq_accum(target, splits * rows * s.head_dim * sizeof(float));
  p.row_dot = static_cast<float*>(row_dot.data());
  p.dq_accum = static_cast<float*>(dq_accum.data());
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == FlashTarget::gpu) {
    gpu::fa2_run_backward(p, bucket, options.tiles);
    gpu::synchronize();  // the workspace is freed on return
    return;
  }
#endif
  emulated::fa2_run_backward(p, bucket, options.tiles);
}

}  // namespace flashproof::kernels
