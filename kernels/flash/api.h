// The public types of the flash kernels (FA1 and FA2) APIs (kernels/fa1/api.h, kernels/fa2/api.h),
// in the spirit of FlashAttention's mha_fwd / mha_bwd: strided tensors in target memory, softmax
// scale, causal / local window, deterministic backward.
//
// Target memory is device memory when target = gpu (nvcc build, a usable GPU) and host memory when
// target = emulated (the same kernels on the host SIMT emulator). Layouts (docs/spec.md "Semantics"): Q, O, dQ, dO
// [batch, seqlen_q, heads_q, head_dim]; K, V, dK, dV [batch, seqlen_k, heads_kv, head_dim];
// LSE [batch, heads_q, seqlen_q] fp32 contiguous, natural log. A packed batch (FlashOptions::
// cu_seqlens_q / cu_seqlens_k) has these layouts with batch 1. The APIs validate every call and
// throw std::invalid_argument with a one-line message naming the problem; see docs/fa2.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "kernels/algo/tile_configs.h"

namespace flashproof::kernels {

enum class FlashDtype { fp16, bf16 };
enum class FlashTarget { gpu, emulated };

// A rank-4 tensor of 16-bit elements: sizes and strides in elements. Requirements (checked): the
// last stride is 1, the other strides and head_dim are multiples of 8 and data is 16-byte aligned
// (the kernels move 16-byte chunks); a head_dim that is not a multiple of 8 must be padded with
// zeros by the caller, as FlashAttention's Python wrapper does.
struct FlashTensor {
  void* data = nullptr;
  std::array<std::int64_t, 4> sizes{};
  std::array<std::int64_t, 4> strides{};
};

// Deliberately broken variants of the soft cap and ALiBi, for tests and the harness's twins only
// (each must be caught by the checks that hold the real one): the backward without dS's factor
// 1 - t^2; the ALiBi distance |i - j| aligned top-left (offset 0) instead of bottom-right; the bias
// added with the wrong sign (+slope * distance).
enum class FlashScoreModFlaw { none, missing_softcap_derivative, alibi_top_left, alibi_wrong_sign };

// Deliberately broken variants of the decode path (docs/fa2.md "Decoding"), for tests and the
// harness's twins only: a split visits one key block fewer than its share; the combine takes an
// empty split (LSE -inf) as a normal one (exp2(-inf - -inf) = NaN where no split before it had keys);
// the key range and page indices come from the cache's capacity instead of the sequence's used
// length (unused slots, NaN, enter); with more than one split the rows of every sequence after the
// first are never written; the appended keys written but the key range taken from the lengths
// before the append.
enum class FlashDecodeFlaw {
  none,
  split_skips_last_block,
  combine_without_empty_guard,
  page_from_allocated_length,
  later_sequences_unwritten,
  keys_before_append,  // appended keys written, but attended over the lengths before the append
};

struct FlashOptions {
  std::optional<float> softmax_scale;  // default 1/sqrt(head_dim) rounded to fp32; must be finite
  int window_left = -1;                // bottom-right aligned window; < 0: unbounded
  int window_right = -1;               // causal: (-1, 0)
  bool deterministic = false;          // backward: bitwise reproducible dQ (no atomics)
  // Which tile shapes of kernels/algo/tile_configs.h run: the shipped ones, or the alternate ones
  // that the tile-independence property compares them with (slower; for testing).
  algo::TileSet tiles = algo::TileSet::shipped;
  // Emulated target only, for sampled checks: thread blocks that produce none of these outputs are
  // skipped and leave them unwritten (kernels/flash/wanted_outputs.h). Query rows [batch][heads_q]
  // [seqlen_q] (O, LSE, dQ) and key columns [batch][heads_kv][seqlen_k] (dK, dV), 1 = wanted; null:
  // all. The FA2 forward and both backwards skip; the FA1 forward runs in full. A backward is given
  // complete O and LSE for the rows its wanted outputs need. Ignored on the GPU.
  const std::uint8_t* wanted_rows = nullptr;
  const std::uint8_t* wanted_cols = nullptr;
  // A packed batch, as FlashAttention-2's varlen API takes it (docs/fa2.md "Packed batches"): host
  // arrays of B + 1 cumulative offsets each; sequence b's query rows are rows [cu_seqlens_q[b],
  // cu_seqlens_q[b+1]) of the batch-1 tensors and its keys [cu_seqlens_k[b], cu_seqlens_k[b+1]),
  // each sequence masked as a dense problem of its own lengths. Both empty: dense. Checked (both
  // or neither, the same count >= 2, from 0, non-decreasing, up to seqlen_q / seqlen_k, at most
  // 65535 sequences); read on the host during the call, which launches each sequence on its own
  // (docs/fa2.md "Packed batches").
  std::span<const std::int32_t> cu_seqlens_q{};
  std::span<const std::int32_t> cu_seqlens_k{};
  // The score modification (docs/fa2.md "Soft cap and ALiBi"; FA2 only, FA1 refuses it): the soft
  // cap c (finite, > 0; unset: none) and ALiBi's slope per query head (host array of heads_q
  // finite values, read during the call; empty: none). A packed batch measures each sequence's
  // ALiBi distance in its own coordinates (bottom-right, as its mask).
  std::optional<float> softcap;
  std::span<const float> alibi_slopes{};
  FlashScoreModFlaw score_mod_flaw = FlashScoreModFlaw::none;  // tests only
  // A KV cache (FA2 forward only; docs/fa2.md "Decoding"). cache_seqlens: host array, one used
  // length per sequence (0 to the capacity); empty: every sequence uses all its capacity. page_size
  // > 0: K and V are a pool [num_pages, page_size, heads_kv, head_dim] (page_size a multiple of 16
  // up to 256) and block_table a host array [batch][pages_per_sequence] of page indices in
  // [0, num_pages) (any order, shared pages allowed), whose length fixes pages_per_sequence and the
  // capacity seqlen_k = pages_per_sequence * page_size; page_size 0: K and V are [batch, seqlen_k,
  // heads_kv, head_dim] and block_table empty. The mask is aligned to each sequence's used length.
  // num_splits: the key blocks split between this many thread blocks (1 to 128) and combined;
  // 0: the heuristic of docs/fa2.md "Decoding". Any of these set makes the call a decode call
  // (num_splits alone too: a split dense forward).
  std::span<const std::int32_t> cache_seqlens{};
  int page_size = 0;
  std::span<const std::int32_t> block_table{};
  int num_splits = 0;
  FlashDecodeFlaw decode_flaw = FlashDecodeFlaw::none;  // tests only

  bool decode() const { return !cache_seqlens.empty() || page_size > 0 || !block_table.empty() || num_splits > 0; }
};

struct FlashForwardTensors {
  FlashTensor q, k, v, o;
  float* lse = nullptr;
  // A decode call's appended keys and values (FA2; docs/fa2.md "Decoding"): [batch, seqlen_new,
  // heads_kv, head_dim], written into the cache k, v at slots cache_seqlens[b] .. + seqlen_new - 1
  // (cache_seqlens required) before attending over cache_seqlens[b] + seqlen_new keys, as
  // FlashAttention-2's flash_attn_with_kvcache(k=, v=) does. Null data: none (given without a
  // decode call: an error). A page receiving appended keys must be mapped by no other used table
  // entry (checked: the result would depend on the order of the writes).
  FlashTensor k_new{}, v_new{};
};

struct FlashBackwardTensors {
  FlashTensor q, k, v, o, dout, dq, dk, dv;
  const float* lse = nullptr;
};

// True when this build has CUDA and a GPU is usable (sm_80 or newer).
bool flash_gpu_usable();

// Target memory for callers that hold host data (the harness adapter, tests): allocation and
// copies, to device memory for gpu and plain host memory for emulated.
class FlashBuffer {
 public:
  FlashBuffer(FlashTarget target, std::size_t bytes);
  ~FlashBuffer();
  FlashBuffer(const FlashBuffer&) = delete;
  FlashBuffer& operator=(const FlashBuffer&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  [[maybe_unused]] FlashTarget target_;  // read only in builds with CUDA (api.cpp)
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace flashproof::kernels
