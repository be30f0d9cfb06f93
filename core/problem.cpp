#include "core/problem.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace flashproof {

namespace {
thread_local std::uint64_t validations = 0;

std::string positive_error(const char* name, std::int64_t v) {
  return v >= 1 ? std::string() : std::string(name) + " (" + std::to_string(v) + ") must be >= 1";
}
}  // namespace

std::string Problem::validate() const {
  ++validations;
  for (const auto& [name, v] : sizes()) {
    if (auto e = positive_error(name, v); !e.empty()) return e;
  }
  if (heads_q % heads_kv != 0)
    return "heads_q (" + std::to_string(heads_q) + ") must be a multiple of heads_kv (" +
           std::to_string(heads_kv) + ")";
  if (head_dim > max_head_dim)
    return "head_dim (" + std::to_string(head_dim) + ") must be at most " +
           std::to_string(max_head_dim);
  if (window_left < -1 || window_right < -1)
    return "window (" + std::to_string(window_left) + "," + std::to_string(window_right) +
           ") sides must be >= 0, or -1 for unbounded";
  if (scale && !std::isfinite(*scale)) return "scale must be finite";
  // Element counts are checked by division so that the products cannot overflow.
  auto too_big = [](std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
    std::int64_t n = 1;
    for (std::int64_t x : {a, b, c, d}) {
      if (n > max_elements / x) return true;
      n *= x;
    }
    return false;
  };
  if (too_big(batch, seqlen_q, heads_q, head_dim))
    return "Q would have more than 2^34 elements";
  if (too_big(batch, seqlen_k, heads_kv, head_dim))
    return "K and V would have more than 2^34 elements";
  return {};
}

float Problem::softmax_scale() const {
  if (scale) return *scale;
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

std::string Problem::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype) << " b=" << batch << " hq=" << heads_q << " hkv=" << heads_kv
    << " sq=" << seqlen_q << " sk=" << seqlen_k << " d=" << head_dim;
  if (causal())
    s << " causal";
  else if (has_mask())
    s << " window=" << window_left << "," << window_right;
  if (scale) s << " scale=" << *scale;
  return s.str();
}

ValidProblem::ValidProblem(const Problem& p) : ValidProblem(p, "") {}

ValidProblem::ValidProblem(const Problem& p, const char* prefix) : p_(p) {
  if (std::string e = p.validate(); !e.empty()) throw std::invalid_argument(prefix + e);
}

std::uint64_t validations_on_this_thread() { return validations; }

}  // namespace flashproof
