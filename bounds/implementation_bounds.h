// Rigorous per-element error bounds of an implementation under test (docs/spec.md "Verdicts", rule 2;
// docs/error-bounds.md Part 2): for every output element x^ of a correct implementation that
// performs the arithmetic of its ArithmeticModel, |x^ - x| <= bound, x the exact result of docs/spec.md's
// semantics on the given inputs. The bounds depend on the dtype, the shape and the data (sum_c
// |q_c k_c| per logit, P, |V|, |dO|, ...), which are evaluated in double with certified margins.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bounds/envelope.h"
#include "core/attention_impl.h"
#include "core/generators.h"
#include "core/output_sample.h"
#include "core/problem.h"

namespace flashproof::bounds {

// Dense over each tensor's logical shape, row-major like reference::CertifiedTensor. +inf where
// the model gives no finite bound (a bound that does not converge; every element outside the
// valid domain, docs/error-bounds.md); 0 where the result is exact (rows that see no key: O = 0, LSE = +inf, zero
// gradients; keys no row sees: dK = dV = 0).
struct ImplementationBounds {
  std::vector<double> o, lse, dq, dk, dv;  // dq, dk, dv empty without backward
  // Backward, given an error e_i of D_i = rowsum(dO * O) per query row: the share of dQ and dK
  // that those errors carry, |scale| e_i sum_j P_ij |k_jc| for dQ and |scale| sum_i P_ij e_i |q_ic|
  // for dK (P from its upper bounds). A backward that forms D from the O it is given (the flash
  // model) carries that O's error there; rule 3 allows for it (harness/check.h). All 0 without
  // d_error; 0 where the row or column is unbounded; empty without backward.
  std::vector<double> dq_from_d_error, dk_from_d_error;
  // Backward, 1 where the bound is conditional: the row's dP (naive) or dS may pass the dtype's
  // largest value, and the bound holds where nothing overflowed. An implementation whose overflow
  // follows IEEE (to inf, never saturating) can only return a finite dQ_i or dK_j when no dS_ij of
  // that row or column overflowed (an inf there reaches every element of both as inf or NaN), so a
  // finite value is judged by the bound and a saturating one cannot hide. Empty without backward.
  std::vector<std::uint8_t> dq_conditional, dk_conditional;
};

// Every bound +inf (no element certified), sized for p: what the harness uses outside the valid
// input domain, and the starting point of implementation_bounds.
ImplementationBounds infinite_bounds(const Problem& p, bool backward);

// Inputs in p.dtype (core/generators.h). The backward bounds take the implementation's own
// forward outputs as their inputs, as the harness runs it, so they include the forward's bounds.
// Throws std::invalid_argument for an invalid problem or mismatched shapes.
// d_error: e_i per query row, indexed like LSE ([b, hq, sq]); only for dq_from_d_error and
// dk_from_d_error.
// gqa: how dK and dV of a group are reduced (core/attention_impl.h); per_head_rounded adds one
// rounding of each head's share.
// wanted: a sampled check (core/output_sample.h; null: every element). Only the elements of its
// rows (o, lse, dq, dq_from_d_error, dq_conditional) and of its columns (dk, dv, dk_from_d_error,
// dk_conditional) are computed, each bit for bit as without a sample; every other element is +inf
// in o, lse, dq, dk, dv and 0 in the from_d_error and conditional vectors, as infinite_bounds gives.
// The forward then costs O(wanted rows x seqlen_k x head_dim); a wanted column still needs every
// row that sees it, each visited once for all the wanted columns it sees. Throws
// std::invalid_argument when the sample does not match p.
ImplementationBounds implementation_bounds(const ValidProblem& p, const Inputs& in, ArithmeticModel model,
                                           bool backward, int threads = 0,
                                           const std::vector<double>* d_error = nullptr,
                                           GqaGradientReduction gqa = GqaGradientReduction::group_sum,
                                           const OutputSample* wanted = nullptr);

// What a check asks of bounds_and_envelopes: implementation_bounds' arguments, whether the rigorous
// bounds are computed at all, and the envelopes' slack.
struct BoundsRequest {
  ArithmeticModel model = ArithmeticModel::flash;
  bool backward = false;
  // false (inputs outside the valid domain): the bounds are infinite_bounds and only the envelopes
  // are computed.
  bool rigorous = true;
  // The envelopes' slack s (envelope.h); none: no envelopes (every Envelope left empty).
  std::optional<double> envelope_slack;
  int threads = 0;
  const std::vector<double>* d_error = nullptr;
  GqaGradientReduction gqa = GqaGradientReduction::group_sum;
  const OutputSample* wanted = nullptr;  // also the envelopes' sample
  // A flash-model backward that recomputes every logit bit for bit as its forward computed it
  // (AttentionImpl::backward_recomputes_forward_logits): its P is bounded through the forward's
  // weights too (docs/error-bounds.md (B1')).
  bool recomputed_logits = false;
  // A flash-model forward that may split a row's keys into up to this many partial results and
  // combine them (split-KV, AttentionImpl::max_key_splits): its weights and LSE carry the partials'
  // LSE roundings and the combine's (docs/error-bounds.md (S1)). 1: none.
  std::int64_t key_splits = 1;
};

struct BoundsAndEnvelopes {
  ImplementationBounds rigorous;
  Envelopes envelopes;
};

// The rigorous bounds and the bound-free envelopes in one pass over the groups (group_bounds.h):
// each group's K and V rows, each query row's visible keys and its q and dO rows are found and read
// once for both. Each is bit for bit what it is alone (implementation_bounds, bound_free_envelopes;
// each evaluates its own dot products, envelope.h says why). Throws as implementation_bounds does.
BoundsAndEnvelopes bounds_and_envelopes(const ValidProblem& p, const Inputs& in, const BoundsRequest& request);

}  // namespace flashproof::bounds
