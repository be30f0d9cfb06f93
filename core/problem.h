// One attention problem: shapes, dtype, softmax scale and mask (docs/spec.md "Semantics").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/dtype.h"

namespace flashproof {

struct Problem {
  std::int64_t batch = 1;
  std::int64_t heads_q = 1;
  std::int64_t heads_kv = 1;
  std::int64_t seqlen_q = 1;
  std::int64_t seqlen_k = 1;
  std::int64_t head_dim = 64;
  DType dtype = DType::fp16;
  // fp32 softmax scale; unset means 1/sqrt(head_dim) rounded to fp32.
  std::optional<float> scale;
  // Bottom-right aligned window; a negative side is unbounded. Causal is (-1, 0).
  std::int64_t window_left = -1;
  std::int64_t window_right = -1;

  static constexpr std::int64_t max_head_dim = 256;
  static constexpr std::int64_t max_elements = std::int64_t{1} << 34;

  // The six sizes with their record names, in the order every record lists them (case files, the
  // check's record, the exchange's case.json, Python's params): one list, so no writer misses one.
  std::array<std::pair<const char*, std::int64_t>, 6> sizes() const {
    return {{{"batch", batch}, {"heads_q", heads_q}, {"heads_kv", heads_kv},
             {"seqlen_q", seqlen_q}, {"seqlen_k", seqlen_k}, {"head_dim", head_dim}}};
  }

  // Empty when valid; otherwise one line naming the problem, e.g.
  // "heads_q (6) must be a multiple of heads_kv (4)".
  std::string validate() const;

  float softmax_scale() const;  // the exact fp32 value every implementation and the reference use
  bool causal() const { return window_left < 0 && window_right == 0; }
  bool has_mask() const { return window_left >= 0 || window_right >= 0; }
  std::int64_t group_size() const { return heads_q / heads_kv; }
  std::int64_t kv_head(std::int64_t h) const { return h / group_size(); }
  std::int64_t mask_offset() const { return seqlen_k - seqlen_q; }

  // Layouts of docs/spec.md "Semantics" (row-major, contiguous).
  std::array<std::int64_t, 4> q_shape() const { return {batch, seqlen_q, heads_q, head_dim}; }
  std::array<std::int64_t, 4> kv_shape() const { return {batch, seqlen_k, heads_kv, head_dim}; }
  std::array<std::int64_t, 4> lse_shape() const { return {batch, heads_q, seqlen_q, 1}; }

  std::string describe() const;  // one line, e.g. "fp16 b=1 hq=2 hkv=1 sq=5 sk=7 d=64 causal"

  bool operator==(const Problem&) const = default;
};

// ---- Validating once per check ----
// Every public entry point that takes a Problem (generate_inputs, the reference, the bounds, the
// naive implementation's unsupported_reason, run_check, prepare_case) refuses an invalid one with
// validate()'s message, through problem_error or require_valid. A check validates its problem once,
// on entry, by opening a ValidatedScope for the time its stages run; within it those entry points
// recognise the problem (the same values) and do not validate it again. Scopes belong to the thread
// that opens them: a stage run on another thread validates for itself.
class ValidatedScope {
 public:
  // Validates p unless a scope open on this thread holds it; throws
  // std::invalid_argument(prefix + p.validate()) when it is invalid.
  explicit ValidatedScope(const Problem& p, const char* prefix = "");
  ~ValidatedScope();
  ValidatedScope(const ValidatedScope&) = delete;
  ValidatedScope& operator=(const ValidatedScope&) = delete;

  // Whether a scope open on this thread holds p.
  static bool holds(const Problem& p);

 private:
  Problem problem_;
  const ValidatedScope* outer_;
};

// p.validate(), or "" without validating when a ValidatedScope on this thread holds p.
std::string problem_error(const Problem& p);
// Throws std::invalid_argument(prefix + problem_error(p)) when that is not empty.
void require_valid(const Problem& p, const char* prefix = "");
// How many times Problem::validate() has run on this thread (tests of the above).
std::uint64_t validations_on_this_thread();

}  // namespace flashproof
