// What the tests of correct implementations expect of a verdict: pass, or not judged by the first
// tier only because some bounds are vacuous (TensorCheck::vacuous; docs/error-bounds.md "Not judged":
// at large logits and peaked softmaxes the model's O, dQ and dK bounds reach the size of the values),
// with every element still within its bound and its envelope; the second tier (docs/spec.md
// "Verdicts") may then pass it by the baseline rule. An infinite bound, any failure of either tier,
// is not this.
#pragma once

#include "harness/check.h"

namespace flashproof::test_impls {

inline bool pass_or_vacuous(const TensorCheck& t) {
  const bool vacuous_only = t.vacuous > 0 && t.unbounded == 0;
  return t.verdict == Verdict::pass ||
         ((t.verdict == Verdict::not_judged || t.verdict == Verdict::pass_baseline_rule) && vacuous_only);
}

inline bool pass_or_vacuous(const CheckRecord& r) {
  if (r.verdict != Verdict::pass && r.verdict != Verdict::not_judged && r.verdict != Verdict::pass_baseline_rule)
    return false;
  for (const TensorCheck& t : r.tensors)
    if (!pass_or_vacuous(t)) return false;
  return true;
}

}  // namespace flashproof::test_impls
