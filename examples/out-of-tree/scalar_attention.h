// A user's own attention, as flashproof sees any implementation (core/attention_impl.h): plain
// scalar float loops, forward and backward, with the naive arithmetic (fp32 sums, P normalised and
// rounded to the dtype, dP and dS rounded to the dtype), masks, GQA and rows that see no key.
#pragma once

#include <flashproof/core/attention_impl.h>

#include <string>

class ScalarAttention final : public flashproof::AttentionImpl {
 public:
  std::string name() const override { return "scalar-example"; }
  std::string description() const override { return "out-of-tree example: scalar float attention"; }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const flashproof::Problem& p, bool) const override { return p.validate(); }
  bool bitwise_reproducible_backward() const override { return true; }
  // Judged by the rigorous bound of the arithmetic it performs.
  flashproof::ArithmeticModel arithmetic_model() const override { return flashproof::ArithmeticModel::naive; }
  void forward(const flashproof::Problem& p, const flashproof::ForwardArgs& a) override;
  void backward(const flashproof::Problem& p, const flashproof::BackwardArgs& a) override;
};
