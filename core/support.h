// What an implementation declares it computes (docs/plugging-in.md, "Declaring what a kernel
// supports"): dtypes, head dims, mask kinds and their alignment, GQA, the backward and sequence-
// length constraints. One declaration serves every route (a C++ AttentionImpl's declared_support,
// a Python callable's `support=`, an imported backend's meta.json): the harness never checks a
// problem outside it, the generators fit their problems into it (counted), and a problem outside
// it is `unsupported`, never a crash or a pass.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "core/problem.h"

namespace flashproof {

// Where a kernel's causal or window mask is anchored. flashproof's semantics are bottom-right
// (docs/spec.md "Semantics"); a top-left kernel computes the same attention exactly when
// seqlen_q == seqlen_k, so it supports masked problems only there.
enum class MaskAlignment { bottom_right, top_left };

struct Support {
  std::set<DType> dtypes;             // empty: every dtype
  std::set<std::int64_t> head_dims;   // empty: every head dim up to max_head_dim
  std::int64_t max_head_dim = 0;      // 0: no maximum of its own
  bool unmasked = true;               // window (-1, -1)
  bool causal = true;                 // window (-1, 0)
  bool windows = true;                // every other window
  MaskAlignment alignment = MaskAlignment::bottom_right;
  bool gqa = true;                    // heads_q > heads_kv
  bool backward = true;
  // Both sequence lengths, where longer than seqlen_free_up_to, are multiples of seqlen_multiple
  // (e.g. 128 and 128: any length up to 128, then multiples of 128).
  std::int64_t seqlen_multiple = 1;
  std::int64_t seqlen_free_up_to = 0;
  std::int64_t max_seqlen_q = 0, max_seqlen_k = 0;  // 0: no maximum
  // Packed batches (Problem::cu_seqlens_q/k). Off unless declared: an implementation written
  // before them would read the packed storage as one long sequence. The length rules above then
  // apply to each sequence.
  bool packed = false;
  // The score modification (Problem::softcap, ::alibi_slopes). Off unless declared, for the same
  // reason: an implementation written before them would compute the unmodified attention.
  bool softcap = false;
  bool alibi = false;
  // KV caches (Problem::cache_seqlens, ::num_splits; docs/spec.md "KV caches"), contiguous and
  // paged (::page_size, ::block_table). Off unless declared: an implementation written before them
  // would read the whole cache, unused slots included. A KV-cache problem is forward only.
  bool kv_cache = false;
  bool paged = false;
  // Appended keys (Problem::seqlen_new): written into the cache before attending. Off unless
  // declared: a cache reader that does not append would attend over unwritten slots.
  bool kv_append = false;

  bool operator==(const Support&) const = default;
};

// Empty when the declaration itself is usable; otherwise one line (a multiple below 1, a maximum
// below 0, no mask kind or head dim left, a head dim outside [1, Problem::max_head_dim]).
std::string validate(const Support& s);

// Empty when s covers p (run in the given direction); otherwise one line naming the first
// constraint p breaks, e.g. "seqlen_k 130 is not a multiple of 128 (declared above 128)".
std::string unsupported_by(const Support& s, const Problem& p, bool backward);

// p moved into s where a shape constraint can be met by changing the shape (the lengths rounded
// down to the multiple and clipped to the maxima, the head dim to the nearest declared one, GQA
// folded to one query head per kv head, the mask replaced by a declared kind, a masked top-left
// case given seqlen_k = seqlen_q, a packed batch made one dense sequence of its longest lengths
// where packed batches are not declared, each sequence fitted where they are, a soft cap or ALiBi
// slopes dropped where they are not declared, a KV cache made dense, or contiguous, where caches, or
// pages, are not). The dtype and the
// direction are never changed: a case with an undeclared one stays unsupported. Returns true when
// p changed. The result is valid when p was.
bool fit_to_support(Problem& p, const Support& s);

// One line, e.g. "dtypes fp16, bf16; head dims 64, 128; masks none, causal (top-left); no GQA;
// lengths above 128 multiples of 128", "every dense problem" (the default: no packed batch, soft
// cap or ALiBi), or "everything" (the default with all three).
std::string describe(const Support& s);

}  // namespace flashproof
