// The FlashAttention-2 C++ API, in the spirit of FlashAttention-2's mha_fwd / mha_bwd: strided
// tensors in target memory, softmax scale, causal / local window, deterministic backward.
//
// Target memory is device memory when target = gpu (nvcc build, a usable GPU) and host memory when
// target = emulated (the same kernels on the host SIMT emulator). Layouts (SPEC.md): Q, O, dQ, dO
// [batch, seqlen_q, heads_q, head_dim]; K, V, dK, dV [batch, seqlen_k, heads_kv, head_dim];
// LSE [batch, heads_q, seqlen_q] fp32 contiguous, natural log. Every call validates its arguments
// and throws std::invalid_argument with a one-line message naming the problem; see docs/fa2.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace flashproof::kernels {

enum class Fa2Dtype { fp16, bf16 };
enum class Fa2Target { gpu, emulated };

// A rank-4 tensor of 16-bit elements: sizes and strides in elements. Requirements (checked): the
// last stride is 1, the other strides and head_dim are multiples of 8 and data is 16-byte aligned
// (the kernels move 16-byte chunks); a head_dim that is not a multiple of 8 must be padded with
// zeros by the caller, as FlashAttention-2's Python wrapper does.
struct Fa2Tensor {
  void* data = nullptr;
  std::array<std::int64_t, 4> sizes{};
  std::array<std::int64_t, 4> strides{};
};

struct Fa2Options {
  std::optional<float> softmax_scale;  // default 1/sqrt(head_dim) rounded to fp32; must be finite
  int window_left = -1;                // bottom-right aligned window; < 0: unbounded
  int window_right = -1;               // causal: (-1, 0)
  bool deterministic = false;          // backward: bitwise reproducible dQ (no atomics)
};

struct Fa2ForwardTensors {
  Fa2Tensor q, k, v, o;
  float* lse = nullptr;
};

struct Fa2BackwardTensors {
  Fa2Tensor q, k, v, o, dout, dq, dk, dv;
  const float* lse = nullptr;
};

void fa2_forward(Fa2Target target, Fa2Dtype dtype, const Fa2ForwardTensors& t, const Fa2Options& options);
void fa2_backward(Fa2Target target, Fa2Dtype dtype, const Fa2BackwardTensors& t, const Fa2Options& options);

// The checks the calls make, without running anything: empty when valid, else the one-line error.
std::string fa2_forward_error(Fa2Target target, const Fa2ForwardTensors& t, const Fa2Options& options);
std::string fa2_backward_error(Fa2Target target, const Fa2BackwardTensors& t, const Fa2Options& options);

// True when this build has CUDA and a GPU is usable (sm_80 or newer).
bool fa2_gpu_usable();
// The head-dim buckets compiled into this build (CMake option FLASHPROOF_FA2_HEAD_DIMS).
bool fa2_bucket_built(int bucket);

// Target memory for callers that hold host data (the harness adapter, tests): allocation and
// copies, to device memory for gpu and plain host memory for emulated.
class Fa2Buffer {
 public:
  Fa2Buffer(Fa2Target target, std::size_t bytes);
  ~Fa2Buffer();
  Fa2Buffer(const Fa2Buffer&) = delete;
  Fa2Buffer& operator=(const Fa2Buffer&) = delete;
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

 private:
  Fa2Target target_;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace flashproof::kernels
