// The one interface every implementation under test is driven through: the naive baseline, the
// shipped FA1/FA2 kernels and any kernel a user plugs in. Inputs and outputs are host tensors in
// docs/spec.md's layouts with explicit strides; outputs are allocated (and possibly poisoned) by the
// caller, so that "every valid element written, nothing outside" can be checked.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/output_sample.h"
#include "core/problem.h"
#include "core/support.h"
#include "core/tensor.h"

namespace flashproof {

// A KV-cache problem's appended keys (Problem::seqlen_new > 0): the new keys and values
// [b, seqlen_new, hkv, d], and the cache (the same tensors as ForwardArgs::k and v, writable) that
// the implementation writes them into before attending (docs/spec.md "KV caches").
struct KvAppend {
  const HostTensor& k_new;
  const HostTensor& v_new;
  HostTensor& k_cache;
  HostTensor& v_cache;
};

struct ForwardArgs {
  const HostTensor& q;  // [b, sq, hq, d]
  const HostTensor& k;  // [b, sk, hkv, d]
  const HostTensor& v;  // [b, sk, hkv, d]
  HostTensor& o;        // [b, sq, hq, d], dtype of q
  HostTensor& lse;      // [b, hq, sq] fp32, natural log
  // A sampled check (core/output_sample.h): only the O and LSE of these query rows are judged, and
  // an implementation may leave the others unwritten. Null: every output is judged.
  const OutputSample* wanted = nullptr;
  // Set exactly when the problem appends keys (Problem::appends()).
  const KvAppend* append = nullptr;
};

struct BackwardArgs {
  const HostTensor& q;
  const HostTensor& k;
  const HostTensor& v;
  const HostTensor& o;    // the forward's output
  const HostTensor& lse;  // the forward's log-sum-exp
  const HostTensor& dout;
  HostTensor& dq;  // like q
  HostTensor& dk;  // like k, summed over the query heads of each group
  HostTensor& dv;  // like v
  // A sampled check: only dQ of wanted->rows and dK, dV of wanted->cols are judged; the others may
  // be left unwritten. The given O and LSE are complete for every row a judged output needs (every
  // row, when any column is wanted). Null: every output is judged.
  const OutputSample* wanted = nullptr;
};

// The bits the harness fills every output with before a run, so that an element never written
// stands out: a NaN in fp16 and fp32, in bf16 a huge finite value (about 7e37) that fails as an error.
inline std::uint32_t output_poison_bits(DType t) { return t == DType::fp32 ? 0x7FC5A5A5u : 0x7E5Au; }
inline HostTensor poisoned_output(DType t, Shape shape, int rank = 4) {
  HostTensor x(t, shape, rank);
  x.fill_storage_bits(output_poison_bits(t));
  return x;
}

// The arithmetic an implementation is assumed to perform, which its rigorous error bound
// (bounds/, docs/error-bounds.md Part 2) is derived from.
enum class ArithmeticModel {
  // FA1/FA2-style: tensor-core dot products (exact products, fp32 accumulation with truncation),
  // logits scaled by an fp32 softmax_scale * log2(e) and exponentiated with an approximate exp2,
  // online softmax with rescaling, P rounded to the dtype before P V, the final division; the
  // backward recomputes P from the stored fp32 LSE and takes D = rowsum(dO * O).
  flash,
  // The naive baseline: fp32 scalar sums, exp, P normalised and then rounded to the dtype, dP
  // rounded to the dtype, D = sum_j P_ij dP_ij.
  naive,
};

// How a backward with GQA (heads_q > heads_kv) forms dK and dV of a kv head from its group of query
// heads, which the rigorous bound needs to know (bounds/implementation_bounds.h).
enum class GqaGradientReduction {
  // One sum over the group's heads in fp32, rounded to the dtype once (FA1, FA2: the kernels
  // accumulate every head of the group into one tile).
  group_sum,
  // Each query head's dK, dV rounded to the dtype, then summed (and rounded again): K and V repeated
  // per query head and the gradients of the repeat summed, as PyTorch's enable_gqa path does.
  // One more rounding per head.
  per_head_rounded,
};

class AttentionImpl {
 public:
  virtual ~AttentionImpl() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // "host", "gpu" or "emulated".
  virtual std::string where() const = 0;
  // What it declares it computes (core/support.h): the generators fit their problems into it and
  // the harness never runs it outside it. Default: everything.
  virtual Support declared_support() const { return {}; }
  // Empty when the problem is supported; otherwise one line saying why not: what the declaration
  // cannot say (a workspace limit, say). The harness asks only about valid problems inside the
  // declared support (a ValidProblem's, core/problem.h), once per check, through refusal() below.
  virtual std::string unsupported_reason(const Problem& p, bool backward) const = 0;
  // True when the backward gives bitwise identical results run after run (no atomics in a
  // varying order); the determinism properties hold such implementations to it.
  virtual bool bitwise_reproducible_backward() const { return false; }
  // The model of the rigorous bound the harness holds this implementation to. A plugged-in kernel
  // is judged as an FA-style kernel unless it says otherwise.
  virtual ArithmeticModel arithmetic_model() const { return ArithmeticModel::flash; }
  virtual GqaGradientReduction gqa_gradient_reduction() const { return GqaGradientReduction::group_sum; }
  // True when a flash-model backward recomputes every scaled logit (scale, soft cap, bias included)
  // bit for bit as its forward computed it, so that the errors of the logits are shared with the LSE
  // the forward returned: the bound of its P is then also taken through the forward's weights
  // (docs/error-bounds.md (B1')), far tighter at large logits. A false declaration gives a bound
  // too tight for the implementation: false alarms on correct outputs, or a `pass` within that
  // tighter bound. Say it only where a test shows the two sides' logits equal bit for bit.
  virtual bool backward_recomputes_forward_logits() const { return false; }
  // The most partial results the forward may split one row's keys into and then combine (split-KV,
  // Flash-Decoding) on problem p; 1: it never splits. A flash-model bound then includes the partials'
  // LSE roundings and the combine's (docs/error-bounds.md (S1)). Declaring fewer than are used
  // gives too tight a bound: false alarms, or a pass within a bound that does not hold.
  virtual std::int64_t max_key_splits(const Problem&) const { return 1; }
  // The same implementation with other tile shapes (block sizes, warps), for the tile-independence
  // property; null when it has only one. Its results must be within the bound like this one's.
  virtual std::unique_ptr<AttentionImpl> with_alternate_tiles() const { return nullptr; }
  virtual void forward(const Problem& p, const ForwardArgs& a) = 0;
  virtual void backward(const Problem& p, const BackwardArgs& a) = 0;
};

// Thrown by forward() or backward() for a problem the implementation refuses when it runs (a Python
// callable raising flashproof.Unsupported): the case is `unsupported`, not a crash.
struct RefusedAtRunTime : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Why impl does not run p: outside its declared support, or its own unsupported_reason; empty when
// it runs it. The one question every route asks.
inline std::string refusal(const AttentionImpl& impl, const Problem& p, bool backward) {
  if (std::string e = unsupported_by(impl.declared_support(), p, backward); !e.empty()) return e;
  return impl.unsupported_reason(p, backward);
}

}  // namespace flashproof
