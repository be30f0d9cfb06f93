// The public entry of the bounds library: checks the arguments, then computes every group (a batch
// entry and kv head, group_bounds.h: the rigorous bounds and the envelopes in one pass) in
// parallel, then applies the evaluation margin to the bounds.
#include "bounds/implementation_bounds.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "bounds/bound_arithmetic.h"
#include "bounds/case_constants.h"
#include "bounds/group_bounds.h"
#include "bounds/group_envelopes.h"
#include "core/parallel.h"

namespace flashproof::bounds {

namespace {

void require_shape(const HostTensor& t, const Shape& s, const char* name) {
  if (t.shape() != s) throw std::invalid_argument(std::string("implementation_bounds: ") + name + " has the wrong shape");
}

// Evaluation margin: the formulas are evaluated in double, a few dozen operations per term.
void finalize(std::vector<double>& v) {
  for (double& x : v) x = std::isnan(x) ? kInf : x * (1 + 0x1p-16);
}

}  // namespace

ImplementationBounds infinite_bounds(const Problem& p, bool backward) {
  const auto numel = [](const Shape& s) { return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]); };
  ImplementationBounds out;
  out.o.assign(numel(p.q_shape()), kInf);
  out.lse.assign(numel(p.lse_shape()), kInf);
  if (backward) {
    out.dq.assign(numel(p.q_shape()), kInf);
    out.dk.assign(numel(p.kv_shape()), kInf);
    out.dv.assign(numel(p.kv_shape()), kInf);
    out.dq_from_d_error.assign(numel(p.q_shape()), 0);
    out.dk_from_d_error.assign(numel(p.kv_shape()), 0);
    out.dq_conditional.assign(numel(p.q_shape()), 0);
    out.dk_conditional.assign(numel(p.kv_shape()), 0);
  }
  return out;
}

ImplementationBounds implementation_bounds(const ValidProblem& valid, const Inputs& in, ArithmeticModel model,
                                           bool backward, int threads, const std::vector<double>* d_error,
                                           GqaGradientReduction gqa, const OutputSample* wanted) {
  BoundsRequest request;
  request.model = model, request.backward = backward, request.threads = threads;
  request.d_error = d_error, request.gqa = gqa, request.wanted = wanted;
  return bounds_and_envelopes(valid, in, request).rigorous;
}

BoundsAndEnvelopes bounds_and_envelopes(const ValidProblem& valid, const Inputs& in, const BoundsRequest& request) {
  const Problem& p = valid;
  const bool backward = request.backward;
  const std::vector<double>* d_error = request.d_error;
  const OutputSample* wanted = request.wanted;
  require_shape(in.q, p.q_shape(), "Q");
  require_shape(in.k, p.kv_shape(), "K");
  require_shape(in.v, p.kv_shape(), "V");
  if (backward) require_shape(in.dout, p.q_shape(), "dO");
  if (d_error && d_error->size() != static_cast<std::size_t>(p.batch * p.heads_q * p.seqlen_q))
    throw std::invalid_argument("implementation_bounds: d_error has the wrong size");
  if (wanted && (static_cast<std::int64_t>(wanted->rows.size()) != p.batch * p.heads_q * p.seqlen_q ||
                 static_cast<std::int64_t>(wanted->cols.size()) != p.batch * p.heads_kv * p.seqlen_k))
    throw std::invalid_argument("implementation_bounds: the sample's rows and columns do not match the problem");
  const CaseConstants cs(p, request.model, request.gqa, request.recomputed_logits, request.key_splits);
  BoundsAndEnvelopes out{infinite_bounds(p, backward), {}};
  if (request.envelope_slack) out.envelopes = zero_envelopes(p, backward);
  if (request.rigorous || request.envelope_slack)
    parallel_for(
        p.batch * p.heads_kv,
        [&](std::int64_t item) {
          GroupBounds group(cs, in, backward, d_error, wanted, request.rigorous ? &out.rigorous : nullptr);
          std::optional<GroupEnvelopes> envelopes;
          if (request.envelope_slack)
            envelopes.emplace(p, in, backward, *request.envelope_slack, wanted, out.envelopes);
          group.run(item / p.heads_kv, item % p.heads_kv, envelopes ? &*envelopes : nullptr);
        },
        request.threads);
  if (request.rigorous)
    for (auto* v : {&out.rigorous.o, &out.rigorous.lse, &out.rigorous.dq, &out.rigorous.dk, &out.rigorous.dv,
                    &out.rigorous.dq_from_d_error, &out.rigorous.dk_from_d_error})
      finalize(*v);
  return out;
}

}  // namespace flashproof::bounds
