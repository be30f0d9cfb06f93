// A registered implementation with a post-processing step that breaks its outputs: the harness
// tests' deliberately wrong implementations. Any registered implementation can be the base; the
// arithmetic model is declared separately, so a base can be judged by another model's bound.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/attention_impl.h"
#include "kernels/registry.h"

namespace flashproof::test_impls {

using ForwardHook = std::function<void(const Problem&, ForwardArgs&)>;
using BackwardHook = std::function<void(const Problem&, BackwardArgs&)>;

class Broken final : public AttentionImpl {
 public:
  Broken(std::string name, std::string base, ArithmeticModel model, ForwardHook fwd, BackwardHook bwd)
      : name_(std::move(name)), base_(find_implementation(base)), model_(model), fwd_(std::move(fwd)),
        bwd_(std::move(bwd)) {
    if (!base_) throw std::invalid_argument("no implementation " + base);
  }
  std::string name() const override { return name_; }
  std::string description() const override { return "deliberately broken " + base_->name(); }
  std::string where() const override { return base_->where(); }
  ArithmeticModel arithmetic_model() const override { return model_; }
  // The outputs are broken after the base ran: its logits are still its own.
  bool backward_recomputes_forward_logits() const override { return base_->backward_recomputes_forward_logits(); }
  std::string unsupported_reason(const Problem& p, bool backward) const override {
    return base_->unsupported_reason(p, backward);
  }
  Support declared_support() const override { return base_->declared_support(); }
  void forward(const Problem& p, const ForwardArgs& a) override {
    base_->forward(p, a);
    ForwardArgs copy = a;
    if (fwd_) fwd_(p, copy);
  }
  void backward(const Problem& p, const BackwardArgs& a) override {
    base_->backward(p, a);
    BackwardArgs copy = a;
    if (bwd_) bwd_(p, copy);
  }

 private:
  std::string name_;
  AttentionImpl* base_;
  ArithmeticModel model_;
  ForwardHook fwd_;
  BackwardHook bwd_;
};

// Registers a Broken implementation unless one of that name exists (tests run in any order, and
// gtest may repeat them in one process).
inline void register_broken(const std::string& name, const std::string& base, ArithmeticModel model,
                            ForwardHook fwd, BackwardHook bwd = {}) {
  if (!find_implementation(name))
    register_implementation(std::make_unique<Broken>(name, base, model, std::move(fwd), std::move(bwd)));
}

}  // namespace flashproof::test_impls
