// The FlashAttention-2 C++ API, in the spirit of FlashAttention-2's mha_fwd / mha_bwd. The tensor,
// option and buffer types are the flash kernels' shared ones (kernels/flash/api.h: target memory,
// layouts); every call validates its arguments and throws std::invalid_argument with a one-line
// message starting "fa2: "; see docs/fa2.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/flash/api.h"

namespace flashproof::kernels {

void fa2_forward(FlashTarget target, FlashDtype dtype, const FlashForwardTensors& t, const FlashOptions& options);
void fa2_backward(FlashTarget target, FlashDtype dtype, const FlashBackwardTensors& t, const FlashOptions& options);

// The checks the calls make, without running anything: empty when valid, else the one-line error.
std::string fa2_forward_error(FlashTarget target, const FlashForwardTensors& t, const FlashOptions& options);
std::string fa2_backward_error(FlashTarget target, const FlashBackwardTensors& t, const FlashOptions& options);

// The head-dim buckets compiled into this build (CMake option FLASHPROOF_FA2_HEAD_DIMS).
bool fa2_bucket_built(int bucket);
// ... and those with the soft cap and ALiBi (docs/fa2.md "Soft cap and ALiBi").
bool fa2_score_mod_built(int bucket);
// ... and those with the decode path (KV caches, paged K/V, split-KV; docs/fa2.md "Decoding").
bool fa2_decode_built(int bucket);

// The split count a decode launch of this shape runs with num_splits = 0 (docs/fa2.md "Decoding";
// a GQA-packed call passes its packed shape: heads_q = heads_kv, seqlen_q = group): FlashAttention-2's
// heuristic over the grid's other blocks, the longest used length's key blocks and kFa2DecodeSms
// multiprocessors (an H100's / H200's 132 on every target, so the emulator splits as the GPU does).
inline constexpr int kFa2DecodeSms = 132;
int fa2_decode_splits(int batch, int heads_q, int seqlen_q, int head_dim, std::span<const std::int32_t> cache_seqlens,
                      int capacity);

// How a decode launch reads K and V, counted statically from the ranges its thread blocks visit
// (the kernel's own split_share / key_blocks_for_query_block / split_key_blocks, after the GQA
// packing fa2_forward applies): over every sequence's used keys of every KV head, the fraction that
// exactly one thread block reads, the fraction no block reads (seen by no row), and the mean number
// of reads per used key. Decoding is bound by memory: 1 read per key is the floor. used_lengths:
// one per sequence (the lengths after any append); num_splits 0: the heuristic's.
struct Fa2DecodeReads {
  int num_splits = 0;
  bool group_packed = false;
  double read_once = 0, never_read = 0, reads_per_key = 0;
};
Fa2DecodeReads fa2_decode_reads(int heads_q, int heads_kv, int seqlen_q, int head_dim, int window_left, int window_right,
                                std::span<const std::int32_t> used_lengths, int num_splits);

}  // namespace flashproof::kernels
