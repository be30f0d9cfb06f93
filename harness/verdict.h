// The verdict rules (check.h, docs/error-bounds.md): an output tensor judged against the
// reference, the implementation's rigorous bound (rule 2), the naive baseline (rule 3, reported)
// and the dtype's range; a case's verdict from its tensors' (fail before out-of-domain before
// not-judged before pass). The check pipeline (check.cpp) computes what they are given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bounds/envelope.h"
#include "core/tensor.h"
#include "harness/check.h"
#include "reference/reference.h"

namespace flashproof {

// What a tensor's check is given besides its outputs: the implementation's rigorous bounds, which
// of them are conditional, the bound-free envelope (null when every bound is finite), and whether
// the inputs are inside the valid domain (outside it only the envelope can fail a tensor).
struct TensorJudges {
  const std::vector<double>& rigorous;
  const std::vector<std::uint8_t>* conditional = nullptr;
  const bounds::Envelope* envelope = nullptr;
  bool inputs_in_domain = true;
};

// One output tensor judged (TensorCheck, check.h): `actual` and the naive `baseline` against the
// reference `ref`; k is rule 3's factor; from_d_error, for dQ and dK of a flash-model backward, the
// given O's share of D per element (bounds::ImplementationBounds::dq_from_d_error).
TensorCheck check_tensor(const std::string& name, const HostTensor& actual, const HostTensor& baseline,
                         const reference::CertifiedTensor& ref, const TensorJudges& judges, double k,
                         bool regression_applies, const CheckOptions& opt,
                         const std::vector<double>* from_d_error = nullptr);

// The size a bound or the second tier's tolerance must stay below to judge anything
// (docs/error-bounds.md "Not judged"): over the `compared` elements, the largest of |r| and
// `magnitude_fraction` of its summands' size (CertifiedTensor::magnitude), less the reference's
// bound; 0 where every one is 0.
double exact_tensor_size(const reference::CertifiedTensor& ref, const std::vector<std::uint8_t>& compared,
                         double magnitude_fraction);

// Whether rule 3 judges O and the gradients: every row's |LSE| (finite ones) within its range
// (CheckOptions::regression_lse_fraction).
bool regression_rule_applies(const std::vector<double>& lse, DType dtype, const CheckOptions& opt);

// The case's domain note (exact results beyond a dtype's range added), in_domain, verdict and
// regression, from r.tensors and r.inputs_in_domain.
void judge_case(CheckRecord& r);

}  // namespace flashproof
