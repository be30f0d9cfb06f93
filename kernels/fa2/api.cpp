#include "kernels/fa2/api.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <initializer_list>
#include <tuple>

#include "kernels/algo/tile_configs.h"
#include "kernels/fa2/targets.h"

#ifndef FLASHPROOF_FA2_BUCKETS
#define FLASHPROOF_FA2_BUCKETS 0xFF  // every head-dim bucket (CMake: FLASHPROOF_FA2_HEAD_DIMS)
#endif

namespace flashproof::kernels {
namespace {

// Row, key and window arithmetic in the kernels is int32: with both lengths below 2^29 and the
// window sides clamped (make_shape), i + offset + window stays below 2^31.
constexpr std::int64_t kMaxSeqlen = std::int64_t{1} << 29;
constexpr std::int64_t kMaxGridDim = 65535;  // grid y (batch) and z (heads)

std::string fmt(const char* name, std::int64_t v) { return std::string(name) + " (" + std::to_string(v) + ")"; }

std::string target_error(Fa2Target target) {
  if (target == Fa2Target::gpu && !fa2_gpu_usable()) return "fa2: target gpu requested but no usable GPU (sm_80+) in this build";
  return {};
}

// Requirements on one tensor given its expected sizes.
std::string tensor_error(const char* name, const Fa2Tensor& t, const std::array<std::int64_t, 4>& expected) {
  const std::string n = std::string("fa2: ") + name;
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

std::string shape_error(const Fa2Tensor& q, const Fa2Tensor& k, const Fa2Options& o) {
  const auto& qs = q.sizes;
  const auto& ks = k.sizes;
  for (int i = 0; i < 4; ++i) {
    if (qs[i] < 1) return "fa2: q sizes must be >= 1 (dimension " + std::to_string(i) + " is " + std::to_string(qs[i]) + ")";
    if (ks[i] < 1) return "fa2: k sizes must be >= 1 (dimension " + std::to_string(i) + " is " + std::to_string(ks[i]) + ")";
  }
  if (ks[0] != qs[0]) return "fa2: k has " + fmt("batch", ks[0]) + " but q has " + std::to_string(qs[0]);
  if (ks[3] != qs[3]) return "fa2: k has " + fmt("head_dim", ks[3]) + " but q has " + std::to_string(qs[3]);
  if (qs[2] % ks[2] != 0) return "fa2: " + fmt("heads_q", qs[2]) + " must be a multiple of " + fmt("heads_kv", ks[2]);
  if (qs[3] > 256) return "fa2: " + fmt("head_dim", qs[3]) + " must be at most 256";
  if (qs[3] % 8 != 0) return "fa2: " + fmt("head_dim", qs[3]) + " must be a multiple of 8 (pad it with zeros)";
  if (!fa2_bucket_built(algo::head_dim_bucket(static_cast<int>(qs[3]))))
    return "fa2: head_dim bucket " + std::to_string(algo::head_dim_bucket(static_cast<int>(qs[3]))) +
           " is not built (FLASHPROOF_FA2_HEAD_DIMS)";
  if (qs[1] > kMaxSeqlen || ks[1] > kMaxSeqlen) return "fa2: sequence lengths must be at most 2^29";
  if (qs[0] > kMaxGridDim) return "fa2: " + fmt("batch", qs[0]) + " must be at most 65535";
  if (qs[2] > kMaxGridDim) return "fa2: " + fmt("heads_q", qs[2]) + " must be at most 65535";
  if (o.softmax_scale && !std::isfinite(*o.softmax_scale)) return "fa2: softmax_scale must be finite";
  return {};
}

FlashShape make_shape(Fa2Dtype dtype, const Fa2Tensor& q, const Fa2Tensor& k, const Fa2Options& o) {
  FlashShape s;
  s.batch = static_cast<int>(q.sizes[0]);
  s.seqlen_q = static_cast<int>(q.sizes[1]);
  s.seqlen_k = static_cast<int>(k.sizes[1]);
  s.heads_q = static_cast<int>(q.sizes[2]);
  s.heads_kv = static_cast<int>(k.sizes[2]);
  s.head_dim = static_cast<int>(q.sizes[3]);
  s.tag = dtype == Fa2Dtype::bf16 ? arch::MmaTag::bf16 : arch::MmaTag::fp16;
  s.softmax_scale = o.softmax_scale ? *o.softmax_scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  // log2(e) folded into the scale once, rounded to fp32 (the kernels then round each product).
  s.scale_log2 = static_cast<float>(static_cast<double>(s.softmax_scale) * 1.4426950408889634);
  // Clamped window sides see the same keys and keep the int arithmetic small: right >= seqlen_q
  // already admits every key (i + offset + seqlen_q >= seqlen_k), left >= seqlen_k likewise.
  s.window_left = o.window_left < 0 ? -1 : std::min(o.window_left, s.seqlen_k);
  s.window_right = o.window_right < 0 ? -1 : std::min(o.window_right, s.seqlen_q);
  return s;
}

SeqTensor seq(const Fa2Tensor& t) {
  return {static_cast<std::uint16_t*>(t.data), t.strides[0], t.strides[1], t.strides[2]};
}

}  // namespace

bool fa2_gpu_usable() {
#if defined(FLASHPROOF_HAS_CUDA)
  return gpu::device_usable();
#else
  return false;
#endif
}

bool fa2_bucket_built(int bucket) {
  for (int i = 0; i < 8; ++i)
    if (algo::kHeadDimBuckets[i] == bucket) return ((FLASHPROOF_FA2_BUCKETS >> i) & 1) != 0;
  return false;
}

int fa2_backward_block_n(int head_dim_bucket) { return algo::tile_config("fa2", "backward", head_dim_bucket).block_n; }

namespace {

using NamedTensor = std::tuple<const char*, const Fa2Tensor*, bool>;  // name, tensor, shaped like q (else like k)

// The checks both directions make: target, shapes, then each tensor's sizes and layout, then LSE.
std::string call_error(Fa2Target target, const Fa2Tensor& q, const Fa2Tensor& k, const Fa2Options& options,
                       std::initializer_list<NamedTensor> tensors, const float* lse) {
  if (std::string e = target_error(target); !e.empty()) return e;
  if (q.data == nullptr || k.data == nullptr) return "fa2: q and k must not be null";
  if (std::string e = shape_error(q, k, options); !e.empty()) return e;
  for (const auto& [name, tensor, like_q] : tensors)
    if (std::string e = tensor_error(name, *tensor, like_q ? q.sizes : k.sizes); !e.empty()) return e;
  if (lse == nullptr) return "fa2: lse is null";
  return {};
}

}  // namespace

std::string fa2_forward_error(Fa2Target target, const Fa2ForwardTensors& t, const Fa2Options& options) {
  return call_error(target, t.q, t.k, options,
                    {{"q", &t.q, true}, {"k", &t.k, false}, {"v", &t.v, false}, {"o", &t.o, true}}, t.lse);
}

std::string fa2_backward_error(Fa2Target target, const Fa2BackwardTensors& t, const Fa2Options& options) {
  return call_error(target, t.q, t.k, options,
                    {{"q", &t.q, true}, {"k", &t.k, false}, {"v", &t.v, false}, {"o", &t.o, true},
                     {"dout", &t.dout, true}, {"dq", &t.dq, true}, {"dk", &t.dk, false}, {"dv", &t.dv, false}},
                    t.lse);
}

void fa2_forward(Fa2Target target, Fa2Dtype dtype, const Fa2ForwardTensors& t, const Fa2Options& options) {
  if (std::string e = fa2_forward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  Fa2ForwardParams p;
  p.shape = make_shape(dtype, t.q, t.k, options);
  p.q = seq(t.q), p.k = seq(t.k), p.v = seq(t.v), p.o = seq(t.o);
  p.lse = t.lse;
  const int bucket = algo::head_dim_bucket(p.shape.head_dim);
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == Fa2Target::gpu) return gpu::fa2_run_forward(p, bucket);
#endif
  emulated::fa2_run_forward(p, bucket);
}

void fa2_backward(Fa2Target target, Fa2Dtype dtype, const Fa2BackwardTensors& t, const Fa2Options& options) {
  if (std::string e = fa2_backward_error(target, t, options); !e.empty()) throw std::invalid_argument(e);
  Fa2BackwardParams p;
  p.shape = make_shape(dtype, t.q, t.k, options);
  p.q = seq(t.q), p.k = seq(t.k), p.v = seq(t.v), p.o = seq(t.o), p.dout = seq(t.dout);
  p.dq = seq(t.dq), p.dk = seq(t.dk), p.dv = seq(t.dv);
  p.lse = t.lse;
  p.deterministic = options.deterministic;
  const int bucket = algo::head_dim_bucket(p.shape.head_dim);
  const FlashShape& s = p.shape;
  const std::size_t rows = static_cast<std::size_t>(s.batch) * s.heads_q * s.seqlen_q;
  const std::size_t splits =
      options.deterministic ? static_cast<std::size_t>((s.seqlen_k + fa2_backward_block_n(bucket) - 1) / fa2_backward_block_n(bucket)) : 1;
  Fa2Buffer row_dot(target, rows * sizeof(float));
  Fa2Buffer dq_accum(target, splits * rows * s.head_dim * sizeof(float));
  p.row_dot = static_cast<float*>(row_dot.data());
  p.dq_accum = static_cast<float*>(dq_accum.data());
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == Fa2Target::gpu) {
    gpu::fa2_run_backward(p, bucket);
    gpu::synchronize();  // the workspace is freed on return
    return;
  }
#endif
  emulated::fa2_run_backward(p, bucket);
}

Fa2Buffer::Fa2Buffer(Fa2Target target, std::size_t bytes) : target_(target), bytes_(bytes) {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target == Fa2Target::gpu) {
    data_ = gpu::device_alloc(bytes);
    return;
  }
#endif
  // 16-byte aligned, as the kernels' chunked loads require.
  data_ = ::operator new(bytes == 0 ? 16 : bytes, std::align_val_t{16});
}

Fa2Buffer::~Fa2Buffer() {
#if defined(FLASHPROOF_HAS_CUDA)
  if (target_ == Fa2Target::gpu) {
    gpu::device_free(data_);
    return;
  }
#endif
  ::operator delete(data_, std::align_val_t{16});
}

void Fa2Buffer::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_) throw std::invalid_argument("fa2: upload larger than the buffer");
#if defined(FLASHPROOF_HAS_CUDA)
  if (target_ == Fa2Target::gpu) return gpu::copy_to_device(data_, host, bytes);
#endif
  std::memcpy(data_, host, bytes);
}

void Fa2Buffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_) throw std::invalid_argument("fa2: download larger than the buffer");
#if defined(FLASHPROOF_HAS_CUDA)
  if (target_ == Fa2Target::gpu) return gpu::copy_to_host(host, data_, bytes);
#endif
  std::memcpy(host, data_, bytes);
}

}  // namespace flashproof::kernels
