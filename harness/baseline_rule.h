// The second tier of verdicts (docs/spec.md "Verdicts"), never mixed with the first: a tensor that
// the rigorous bounds leave not judged inside the domain is judged by FlashAttention's own rule,
// its largest error at most k times that of the same computation in the dtype
// (make_dtype_scores_baseline, kernels/naive/naive_attention.h) plus the rounding-noise floor:
// "pass (baseline rule)" or "fail (baseline rule)". The baseline runs once per check, and only when
// some tensor needs it. Where that baseline returns NaN or inf for a finite exact value, its error
// has no size and the tensor stays not judged.
#pragma once

#include "bounds/envelope.h"
#include "core/tensor.h"
#include "harness/check.h"
#include "reference/reference.h"

namespace flashproof {

// t (verdict not_judged) judged against the dtype computation's output `dtype_out` for the same
// reference; k is rule 3's factor for the tensor, lse_share the allowance of a backward that
// recomputes P from the LSE it is given (given_lse_share). A tolerance that judges nothing passes
// nothing, as a vacuous bound does not (docs/error-bounds.md "Not judged"): one at least the
// tensor's exact size (exact_tensor_size with CheckOptions::vacuous_magnitude_fraction), or where
// every magnitude is 0 at least CheckOptions::vacuous_envelope_fraction of the narrowest envelope
// width (`envelope`), or not finite; an error beyond it still fails. So does an infinity the first
// tier admitted under a vacuous bound (TensorCheck::inf_within_vacuous_bound), where the dtype
// computation stayed finite. Leaves any other verdict as it is.
void apply_baseline_rule(TensorCheck& t, const HostTensor& dtype_out, const reference::CertifiedTensor& ref,
                         const bounds::Envelope& envelope, const CheckOptions& opt, double k,
                         double lse_share = 0);

// A flash-model backward recomputes P from the LSE it is given, fp32 and the implementation's own,
// where the dtype computation recomputes the softmax: as rule 3 allows the given O's share of D, the
// second tier allows the given LSE's share. With delta the largest |LSE^ - LSE| over the rows (plus
// the reference's bound and two fp32 roundings of |LSE|, the backward's fl(LSE log2 e) and its
// recomputed logit), every P^ is within a factor e^delta of P; as the change is a factor per element
// of P, dV (sum_i P dO), dS = P (dP - D^) with D^ from the given O, hence dQ and dK, move by at most
// expm1(delta) times their summands' size (CertifiedTensor::magnitude). Returns that for `grad`.
double given_lse_share(const HostTensor& lse_given, const reference::CertifiedTensor& lse_ref,
                       const reference::CertifiedTensor& grad);

}  // namespace flashproof
