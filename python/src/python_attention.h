// An AttentionImpl whose forward and backward are Python callables (the `flashproof` package's
// check, fuzz, properties and replay). The C++ side only moves bits: it hands a Python "runner"
// (flashproof/_runner.py) contiguous copies of the inputs as raw bit patterns and copies the
// runner's bit patterns into the harness's poisoned output views, so the harness judges exactly
// what the callable returned. Conversions to NumPy/torch and the checks of the returned shapes and
// dtypes live in the runner, where they can raise TypeError/ValueError with one-line messages.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <exception>
#include <set>
#include <string>

#include "core/attention_impl.h"

namespace flashproof::python {

struct PythonImplSettings {
  std::string name;         // e.g. "python:mykernel"
  std::string description;
  bool has_backward = false;
  std::set<DType> dtypes;   // empty: every dtype (joined with support.dtypes)
  Support support;          // what the callable declares (flashproof.Support)
  ArithmeticModel model = ArithmeticModel::flash;
  GqaGradientReduction gqa = GqaGradientReduction::group_sum;
};

class PythonAttention : public AttentionImpl {
 public:
  // runner(direction: str, params: dict, inputs: tuple[bytes, ...]) -> tuple[bytes, ...]
  PythonAttention(PythonImplSettings settings, nanobind::object runner);

  std::string name() const override { return settings_.name; }
  std::string description() const override { return settings_.description; }
  std::string where() const override { return "python"; }
  // The declared support with the dtypes and the backward the settings give.
  Support declared_support() const override;
  std::string unsupported_reason(const Problem&, bool) const override { return {}; }
  ArithmeticModel arithmetic_model() const override { return settings_.model; }
  GqaGradientReduction gqa_gradient_reduction() const override { return settings_.gqa; }
  void forward(const Problem& p, const ForwardArgs& a) override;
  void backward(const Problem& p, const BackwardArgs& a) override;

  // A registered implementation lives in the registry for the whole process: its callables are
  // swapped in for a campaign and dropped after it (release()), so that no Python reference
  // outlives the interpreter (the registry is destroyed after Python finalises).
  void rebind(PythonImplSettings settings, nanobind::object runner);
  void release() { runner_ = nanobind::object(); }

  // The Python exception the last failing call raised (null when none): run_check sees a
  // one-line std::runtime_error, the binding re-raises the original exception to the caller.
  std::exception_ptr take_pending_error();

 private:
  nanobind::object call_runner(const char* direction, const Problem& p, nanobind::tuple inputs);

  PythonImplSettings settings_;
  nanobind::object runner_;
  std::exception_ptr pending_;
};

// Makes forks of this process (the campaign's child per case) safe for the interpreter while
// `active`: PyOS_BeforeFork / AfterFork_Parent / AfterFork_Child around fork(), as os.fork()
// does. The caller must hold the GIL on the thread that forks.
class ForkGuard {
 public:
  ForkGuard();
  ~ForkGuard();
  ForkGuard(const ForkGuard&) = delete;
  ForkGuard& operator=(const ForkGuard&) = delete;
};

}  // namespace flashproof::python
