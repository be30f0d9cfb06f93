// A user's implementation as the helper's tests need one: the naive baseline under another name,
// correct, or with a deliberate defect (the softmax scale dropped, i.e. taken as 1), which the
// differential and accuracy properties and the campaign must catch.
#pragma once

#include <memory>
#include <string>

#include "kernels/naive/naive_attention.h"

namespace flashproof::testkit {

class ForwardingAttention final : public AttentionImpl {
 public:
  ForwardingAttention(std::string name, bool drop_scale) : name_(std::move(name)), drop_scale_(drop_scale) {}
  std::string name() const override { return name_; }
  std::string description() const override { return drop_scale_ ? "naive, softmax scale dropped" : "naive, forwarded"; }
  std::string where() const override { return naive_->where(); }
  std::string unsupported_reason(const Problem& p, bool backward) const override {
    return naive_->unsupported_reason(p, backward);
  }
  bool bitwise_reproducible_backward() const override { return naive_->bitwise_reproducible_backward(); }
  Support declared_support() const override { return naive_->declared_support(); }
  ArithmeticModel arithmetic_model() const override { return naive_->arithmetic_model(); }
  GqaGradientReduction gqa_gradient_reduction() const override { return naive_->gqa_gradient_reduction(); }
  void forward(const Problem& p, const ForwardArgs& a) override { naive_->forward(as_run(p), a); }
  void backward(const Problem& p, const BackwardArgs& a) override { naive_->backward(as_run(p), a); }

 private:
  Problem as_run(Problem p) const {
    if (drop_scale_) p.scale = 1.0f;
    return p;
  }
  std::string name_;
  bool drop_scale_;
  std::unique_ptr<AttentionImpl> naive_ = make_naive_attention();
};

}  // namespace flashproof::testkit
