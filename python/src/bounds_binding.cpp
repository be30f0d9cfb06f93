// flashproof._core.bounds: the rigorous per-element bounds of an implementation under test (rule 2,
// docs/error-bounds.md Part 2), as run_check computes them (harness/check.h, rigorous_bounds) for an
// implementation that does not declare its backward's logits recomputed bit for bit (a Python one
// cannot yet: docs/error-bounds.md (B1')), for flashproof.Case.bounds (python/flashproof/_case.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/case_file.h"
#include "harness/check.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace flashproof::python {
namespace {

nb::bytes doubles_of(const std::vector<double>& v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

nb::bytes flags_of(const std::vector<std::uint8_t>& v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

// case_json: the case's case file (Case.to_json), whose saved check options apply (a sampled
// check's bounds are +inf outside its sample). Per tensor the bounds as float64 bytes in the
// tensor's logical order; dq_conditional and dk_conditional as one byte per element.
nb::dict bounds_of(const std::string& case_json, const std::string& model, const std::string& gqa, bool backward,
                   int threads) {
  CaseFile cf = case_from_json(case_json, "the case");
  Case c = cf.c;
  c.backward = backward;
  ArithmeticModel m;
  if (model == "flash") m = ArithmeticModel::flash;
  else if (model == "naive") m = ArithmeticModel::naive;
  else throw std::invalid_argument("model must be 'flash' or 'naive', got '" + model + "'");
  GqaGradientReduction g;
  if (gqa == "group_sum") g = GqaGradientReduction::group_sum;
  else if (gqa == "per_head_rounded") g = GqaGradientReduction::per_head_rounded;
  else throw std::invalid_argument("gqa must be 'group_sum' or 'per_head_rounded', got '" + gqa + "'");
  CheckOptions opt = cf.options;
  opt.reference.threads = threads;
  std::string domain_note;
  const bounds::ImplementationBounds b = rigorous_bounds(c, m, g, opt, &domain_note);
  nb::dict d;
  d["o"] = doubles_of(b.o);
  d["lse"] = doubles_of(b.lse);
  if (backward) {
    d["dq"] = doubles_of(b.dq);
    d["dk"] = doubles_of(b.dk);
    d["dv"] = doubles_of(b.dv);
    d["dq_conditional"] = flags_of(b.dq_conditional);
    d["dk_conditional"] = flags_of(b.dk_conditional);
  }
  d["inputs_in_domain"] = domain_note.empty();
  d["domain_note"] = domain_note;
  return d;
}

}  // namespace

void bind_bounds(nb::module_& m) {
  m.def("bounds", &bounds_of, "case_json"_a, "model"_a, "gqa"_a, "backward"_a, "threads"_a);
}

}  // namespace flashproof::python
