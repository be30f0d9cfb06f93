// The harness adapter of the flash kernels. A tensor whose layout the kernels take as it is (head_dim
// a multiple of 8, 16-byte chunks aligned) travels with its whole storage, so the kernels see its
// strides and an output's bytes outside the view come back untouched (the harness poisons them to
// catch stray writes). Other tensors are packed into a zero-padded contiguous copy.
#include "kernels/flash/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/flash/validate.h"

namespace flashproof {
namespace {

using kernels::FlashBuffer;
using kernels::FlashTarget;
using kernels::FlashTensor;

std::int64_t padded_head_dim(std::int64_t d) { return (d + 7) / 8 * 8; }

bool usable_as_is(const HostTensor& t, std::int64_t padded_d) {
  return t.shape()[3] == padded_d && t.strides()[3] == 1 && t.strides()[0] % 8 == 0 && t.strides()[1] % 8 == 0 &&
         t.strides()[2] % 8 == 0 && t.strides()[0] >= 0 && t.strides()[1] >= 0 && t.strides()[2] >= 0 &&
         t.offset() % 8 == 0;
}

// A host tensor staged in target memory.
struct Staged {
  std::unique_ptr<FlashBuffer> buffer;
  FlashTensor tensor;
  bool whole_storage = false;
};

Staged stage(FlashTarget target, const HostTensor& t, std::int64_t padded_d, bool upload) {
  Staged s;
  const Shape& shape = t.shape();
  s.tensor.sizes = {shape[0], shape[1], shape[2], padded_d};
  if (usable_as_is(t, padded_d)) {
    const std::size_t bytes = static_cast<std::size_t>(t.storage_elements()) * 2;
    s.buffer = std::make_unique<FlashBuffer>(target, bytes);
    s.buffer->upload(t.storage_data(), bytes);  // outputs too: bytes outside the view come back as they were
    s.tensor.data = static_cast<std::uint16_t*>(s.buffer->data()) + t.offset();
    s.tensor.strides = {t.strides()[0], t.strides()[1], t.strides()[2], 1};
    s.whole_storage = true;
    return s;
  }
  const std::int64_t rows = shape[0] * shape[1] * shape[2];
  std::vector<std::uint16_t> packed(static_cast<std::size_t>(rows * padded_d), 0);
  if (upload) {
    std::size_t x = 0;
    for (std::int64_t a = 0; a < shape[0]; ++a)
      for (std::int64_t b = 0; b < shape[1]; ++b)
        for (std::int64_t c = 0; c < shape[2]; ++c, x += static_cast<std::size_t>(padded_d))
          for (std::int64_t d = 0; d < shape[3]; ++d) packed[x + static_cast<std::size_t>(d)] = static_cast<std::uint16_t>(t.bits(a, b, c, d));
  }
  s.buffer = std::make_unique<FlashBuffer>(target, packed.size() * 2);
  s.buffer->upload(packed.data(), packed.size() * 2);
  s.tensor.data = s.buffer->data();
  s.tensor.strides = {shape[1] * shape[2] * padded_d, shape[2] * padded_d, padded_d, 1};
  return s;
}

void fetch(const Staged& s, HostTensor& t) {
  if (s.whole_storage) {
    s.buffer->download(t.storage_data(), static_cast<std::size_t>(t.storage_elements()) * 2);
    return;
  }
  const Shape& shape = t.shape();
  const std::int64_t padded_d = s.tensor.sizes[3];
  std::vector<std::uint16_t> packed(s.buffer->bytes() / 2);
  s.buffer->download(packed.data(), s.buffer->bytes());
  std::size_t x = 0;
  for (std::int64_t a = 0; a < shape[0]; ++a)
    for (std::int64_t b = 0; b < shape[1]; ++b)
      for (std::int64_t c = 0; c < shape[2]; ++c, x += static_cast<std::size_t>(padded_d))
        for (std::int64_t d = 0; d < shape[3]; ++d) t.set_bits(a, b, c, d, packed[x + static_cast<std::size_t>(d)]);
}

// LSE: the kernels write [batch, heads_q, seqlen_q] contiguous fp32.
struct StagedLse {
  std::unique_ptr<FlashBuffer> buffer;
  std::size_t count = 0;
};

StagedLse stage_lse(FlashTarget target, const HostTensor& lse, bool upload) {
  StagedLse s;
  const Shape& shape = lse.shape();
  s.count = static_cast<std::size_t>(shape[0] * shape[1] * shape[2]);
  s.buffer = std::make_unique<FlashBuffer>(target, s.count * sizeof(float));
  if (upload) {
    std::vector<float> values(s.count);
    std::size_t x = 0;
    for (std::int64_t a = 0; a < shape[0]; ++a)
      for (std::int64_t b = 0; b < shape[1]; ++b)
        for (std::int64_t c = 0; c < shape[2]; ++c) values[x++] = static_cast<float>(lse.get(a, b, c));
    s.buffer->upload(values.data(), s.count * sizeof(float));
  }
  return s;
}

void fetch_lse(const StagedLse& s, HostTensor& lse) {
  std::vector<std::uint32_t> bits(s.count);
  s.buffer->download(bits.data(), s.count * sizeof(float));
  const Shape& shape = lse.shape();
  std::size_t x = 0;
  for (std::int64_t a = 0; a < shape[0]; ++a)
    for (std::int64_t b = 0; b < shape[1]; ++b)
      for (std::int64_t c = 0; c < shape[2]; ++c) lse.set_bits(a, b, c, 0, bits[x++]);
}

kernels::FlashOptions options_for(const Problem& p, const FlashKernelEntry& entry) {
  kernels::FlashOptions o;
  o.softmax_scale = p.softmax_scale();
  o.window_left = static_cast<int>(p.window_left < 0 ? -1 : std::min<std::int64_t>(p.window_left, 1 << 30));
  o.window_right = static_cast<int>(p.window_right < 0 ? -1 : std::min<std::int64_t>(p.window_right, 1 << 30));
  o.deterministic = entry.deterministic;
  o.tiles = entry.tiles;
  o.softcap = p.softcap;
  o.alibi_slopes = p.alibi_slopes;  // the Problem outlives the call
  o.score_mod_flaw = entry.score_mod_flaw;
  o.decode_flaw = entry.decode_flaw;
  return o;
}

// A sampled check's judged outputs, for the emulator's partial launches (kernels/flash/wanted_outputs.h).
kernels::FlashOptions with_wanted(kernels::FlashOptions o, const Problem& p, const OutputSample* wanted) {
  if (wanted == nullptr) return o;
  if (static_cast<std::int64_t>(wanted->rows.size()) != p.batch * p.heads_q * p.seqlen_q ||
      static_cast<std::int64_t>(wanted->cols.size()) != p.batch * p.heads_kv * p.seqlen_k)
    throw std::invalid_argument("the sample's rows and columns do not match the problem");
  o.wanted_rows = wanted->rows.data();
  o.wanted_cols = wanted->cols.data();
  return o;
}

// Host arrays as the API takes them (int32), each value checked: "flash: <what> (x) does not fit int32".
std::vector<std::int32_t> narrow_int32(const std::vector<std::int64_t>& values, const char* what) {
  std::vector<std::int32_t> out;
  out.reserve(values.size());
  for (const std::int64_t x : values) {
    if (x < 0 || x > std::numeric_limits<std::int32_t>::max())
      throw std::invalid_argument(std::string("flash: ") + what + " (" + std::to_string(x) + ") does not fit int32");
    out.push_back(static_cast<std::int32_t>(x));
  }
  return out;
}

// A packed problem's offsets as the API takes them (int32; Problem::validate bounds them by the
// lengths, and unsupported_reason the lengths by 2^29). Empty for a dense problem.
struct SequenceOffsets {
  std::vector<std::int32_t> q, k;

  explicit SequenceOffsets(const Problem& p)
      : q(narrow_int32(p.cu_seqlens_q, "a packed batch's offset")), k(narrow_int32(p.cu_seqlens_k, "a packed batch's offset")) {}
  kernels::FlashOptions applied_to(kernels::FlashOptions o) const {
    o.cu_seqlens_q = q;
    o.cu_seqlens_k = k;
    return o;
  }
};

// A KV-cache problem's lengths, table and split count as the API takes them (int32; Problem::validate
// bounds the lengths by seqlen_k and the entries by num_pages, and unsupported_reason those by
// int32). Empty for a problem without a cache.
struct CacheOptions {
  std::vector<std::int32_t> seqlens, table;
  int page_size = 0, num_splits = 0;

  explicit CacheOptions(const Problem& p)
      : seqlens(narrow_int32(p.cache_seqlens, "a KV cache's length")),
        table(narrow_int32(p.block_table, "a KV cache's page index")), page_size(static_cast<int>(p.page_size)),
        num_splits(static_cast<int>(p.num_splits)) {}
  kernels::FlashOptions applied_to(kernels::FlashOptions o) const {
    o.cache_seqlens = seqlens;
    o.block_table = table;
    o.page_size = page_size;
    o.num_splits = num_splits;
    return o;
  }
};

class FlashAttention final : public AttentionImpl {
 public:
  explicit FlashAttention(FlashKernelEntry entry) : entry_(std::move(entry)) {}

  std::string name() const override { return entry_.name; }
  std::string description() const override { return entry_.description; }
  std::string where() const override { return target() == FlashTarget::gpu ? "gpu" : "emulated"; }
  bool bitwise_reproducible_backward() const override { return entry_.deterministic; }
  // The backward's logits are the forward's, bit for bit, on the emulator (docs/error-bounds.md
  // (B1'): the same scaled_logit and score modification, S^T in the forward's k-step order, and an
  // mma model symmetric in its operands, ArchMma.TransposedOperandsGiveTheTransposedLogitsBitForBit).
  // On the GPU not declared until scripts/gpu-check's MmaTransposeGpu has passed on the device.
  bool backward_recomputes_forward_logits() const override { return target() == FlashTarget::emulated; }
  // The decode path splits a row's keys into the num_splits asked for, or as many as its heuristic
  // chooses, at most Problem::max_splits (docs/error-bounds.md (S1)).
  std::int64_t max_key_splits(const Problem& p) const override {
    if (!p.kv_cache() || !decode()) return 1;
    return p.num_splits > 0 ? p.num_splits : Problem::max_splits;
  }

  std::unique_ptr<AttentionImpl> with_alternate_tiles() const override {
    if (entry_.tiles == algo::TileSet::alternate) return nullptr;
    FlashKernelEntry alternate = entry_;
    alternate.name += "@alternate-tiles";
    alternate.description += ", alternate tile shapes";
    alternate.tiles = algo::TileSet::alternate;
    return std::make_unique<FlashAttention>(std::move(alternate));
  }

  // The declaration (core/support.h); which head-dim buckets this build compiled, and the grid's
  // limits on batch and heads, stay in unsupported_reason (a narrowed build is not a property of
  // the kernel).
  Support declared_support() const override {
    Support s;
    s.dtypes = {DType::fp16, DType::bf16};
    s.max_seqlen_q = s.max_seqlen_k = std::int64_t{1} << 29;
    s.packed = true;  // forward and backward (docs/fa2.md, docs/fa1.md "Packed batches")
    s.softcap = s.alibi = score_mod();  // docs/fa2.md "Soft cap and ALiBi"
    s.kv_cache = s.paged = s.kv_append = decode();  // docs/fa2.md "Decoding"
    return s;
  }

  std::string unsupported_reason(const Problem& p, bool) const override {
    const kernels::FlashKernelLimits& limits = *entry_.limits;
    const std::string name = limits.name;
    if (p.dtype != DType::fp16 && p.dtype != DType::bf16)
      return name + " runs fp16 and bf16 only (got " + std::string(dtype_name(p.dtype)) + ")";
    const int bucket = limits.bucket_of(static_cast<int>(staged_head_dim(p)));
    if (!limits.bucket_built(bucket))
      return name + ": head_dim bucket " + std::to_string(bucket) + " is not built (" + limits.buckets_option + ")";
    if (p.batch > 65535 || p.heads_q > 65535) return name + ": batch and heads_q must be at most 65535";
    if (p.sequences() > 65535) return name + ": packed batches must have at most 65535 sequences";
    if (p.seqlen_q > (1 << 29) || p.seqlen_k > (1 << 29)) return name + ": sequence lengths must be at most 2^29";
    if (p.kv_cache()) {
      if (!decode()) return name + ": no KV cache";
      if (p.softcap || p.alibi()) return name + ": the soft cap and ALiBi are not built for the KV-cache path";
      if (!limits.decode_built(bucket))
        return name + ": the KV-cache path is not built for head_dim bucket " + std::to_string(bucket);
      if (p.num_pages > std::numeric_limits<std::int32_t>::max()) return name + ": num_pages must fit int32";
      if (p.paged() && p.batch * p.pages_per_sequence() > std::numeric_limits<std::int32_t>::max())
        return name + ": the block table must have at most 2^31 - 1 entries";
    }
    if (p.softcap || p.alibi()) {
      if (!score_mod()) return name + ": no soft cap or ALiBi";
      if (!limits.score_mod_built(bucket))
        return name + ": the soft cap and ALiBi are not built for head_dim bucket " + std::to_string(bucket);
      if (p.softcap) {  // the kernels' constants in log2 units must be finite and nonzero (validate.cpp)
        const float cap_log2 = *p.softcap * 1.44269504088896340736f;
        if (!std::isfinite(cap_log2) || cap_log2 == 0 || !std::isfinite(1.0f / cap_log2))
          return name + ": softcap out of the kernels' range (c * log2 e and its inverse must be finite fp32)";
      }
    }
    return {};
  }

  void forward(const Problem& p, const ForwardArgs& a) override {
    const FlashTarget t = target();
    const std::int64_t d = staged_head_dim(p);
    Staged q = stage(t, a.q, d, true), k = stage(t, a.k, d, true), v = stage(t, a.v, d, true);
    Staged o = stage(t, a.o, d, false);
    StagedLse lse = stage_lse(t, a.lse, false);
    const SequenceOffsets offsets(p);
    const CacheOptions cache(p);
    // A KV cache runs every block (the decode path has no partial launches): wanted rows not passed.
    const kernels::FlashOptions options = p.kv_cache() ? cache.applied_to(options_for(p, entry_))
                                                       : offsets.applied_to(with_wanted(options_for(p, entry_), p, a.wanted));
    // Appended keys: staged beside the cache, which comes back with them written.
    const bool appends = p.appends();
    if (appends && a.append == nullptr) throw std::invalid_argument("flash: the problem appends keys but the call gives none");
    Staged k_new, v_new;
    if (appends) k_new = stage(t, a.append->k_new, d, true), v_new = stage(t, a.append->v_new, d, true);
    entry_.forward(t, dtype(p),
                   {q.tensor, k.tensor, v.tensor, o.tensor, static_cast<float*>(lse.buffer->data()), k_new.tensor, v_new.tensor},
                   options);
    fetch(o, a.o);
    fetch_lse(lse, a.lse);
    if (appends) fetch(k, a.append->k_cache), fetch(v, a.append->v_cache);
  }

  void backward(const Problem& p, const BackwardArgs& a) override {
    const FlashTarget t = target();
    const std::int64_t d = staged_head_dim(p);
    Staged q = stage(t, a.q, d, true), k = stage(t, a.k, d, true), v = stage(t, a.v, d, true);
    Staged o = stage(t, a.o, d, true), dout = stage(t, a.dout, d, true);
    Staged dq = stage(t, a.dq, d, false), dk = stage(t, a.dk, d, false), dv = stage(t, a.dv, d, false);
    StagedLse lse = stage_lse(t, a.lse, true);
    const SequenceOffsets offsets(p);
    entry_.backward(t, dtype(p),
                    {q.tensor, k.tensor, v.tensor, o.tensor, dout.tensor, dq.tensor, dk.tensor, dv.tensor,
                     static_cast<const float*>(lse.buffer->data())},
                    offsets.applied_to(with_wanted(options_for(p, entry_), p, a.wanted)));
    fetch(dq, a.dq);
    fetch(dk, a.dk);
    fetch(dv, a.dv);
  }

 private:
  // FLASHPROOF_TARGET=emulated forces the emulator even where a GPU is usable (the `emulated`
  // tests), =gpu forces the GPU (the `gpu` tests; the API then rejects a missing GPU).
  static FlashTarget target() {
    const char* forced = std::getenv("FLASHPROOF_TARGET");
    if (forced != nullptr && std::strcmp(forced, "emulated") == 0) return FlashTarget::emulated;
    if (forced != nullptr && std::strcmp(forced, "gpu") == 0) return FlashTarget::gpu;
    return kernels::flash_gpu_usable() ? FlashTarget::gpu : FlashTarget::emulated;
  }
  static kernels::FlashDtype dtype(const Problem& p) {
    return p.dtype == DType::bf16 ? kernels::FlashDtype::bf16 : kernels::FlashDtype::fp16;
  }
  // The head dim the kernels run: the problem's padded with zeros to a multiple of 8, and a problem
  // with a soft cap or ALiBi further, to the first head dim of a bucket that has them built (d 96
  // runs as 104 in bucket 128). Zero columns add exact zeros to every dot product, so the results,
  // and the bounds (docs/error-bounds.md: the sums over the head dim padded to 16), are those of d.
  std::int64_t staged_head_dim(const Problem& p) const {
    std::int64_t d = padded_head_dim(p.head_dim);
    const kernels::FlashKernelLimits& limits = *entry_.limits;
    if (p.kv_cache() && decode()) {  // the same padding into a bucket with the decode path (d 32 as 40)
      for (std::int64_t x = d; x <= Problem::max_head_dim; x += 8)
        if (limits.decode_built(limits.bucket_of(static_cast<int>(x)))) return x;
      return d;  // none: unsupported_reason says so
    }
    if (!(p.softcap || p.alibi()) || !score_mod()) return d;
    for (std::int64_t x = d; x <= Problem::max_head_dim; x += 8)
      if (limits.score_mod_built(limits.bucket_of(static_cast<int>(x)))) return x;
    return d;  // none: unsupported_reason says so
  }
  // The kernel has the decode path (in some bucket) and these tiles run it.
  bool decode() const { return entry_.limits->decode_built != nullptr && entry_.tiles == algo::TileSet::shipped; }
  // The kernel has the soft cap and ALiBi (in some bucket) and these tiles run them.
  bool score_mod() const { return entry_.limits->score_mod_built != nullptr && entry_.tiles == algo::TileSet::shipped; }
  FlashKernelEntry entry_;
};

}  // namespace

std::unique_ptr<AttentionImpl> make_flash_attention(FlashKernelEntry entry) {
  return std::make_unique<FlashAttention>(std::move(entry));
}

}  // namespace flashproof
