#include "bounds/envelope.h"

#include "bounds/implementation_bounds.h"

namespace flashproof::bounds {

namespace {

std::size_t numel(const Shape& s) { return static_cast<std::size_t>(s[0] * s[1] * s[2] * s[3]); }

void size(Envelope& e, std::size_t n) { e.lo.assign(n, 0), e.hi.assign(n, 0); }

}  // namespace

const char* envelope_rule(const std::string& tensor) {
  if (tensor == "O") return "O in the hull of the visible V rows";
  if (tensor == "LSE") return "LSE between the largest logit and it plus log n";
  if (tensor == "dQ") return "|dQ| within what sum_j P_ij = 1 allows";
  if (tensor == "dK") return "|dK| within what P <= 1 and sum_j P_ij = 1 allow";
  if (tensor == "dV") return "|dV| within what P <= 1 allows";
  return "the bound-free envelope";
}

Envelopes zero_envelopes(const Problem& p, bool backward) {
  Envelopes out;
  size(out.o, numel(p.q_shape()));
  size(out.lse, numel(p.lse_shape()));
  if (backward) {
    size(out.dq, numel(p.q_shape()));
    size(out.dk, numel(p.kv_shape()));
    size(out.dv, numel(p.kv_shape()));
  }
  return out;
}

Envelopes bound_free_envelopes(const ValidProblem& p, const Inputs& in, bool backward, double slack,
                               const OutputSample* sample, int threads) {
  BoundsRequest request;
  request.backward = backward;
  request.rigorous = false;
  request.envelope_slack = slack;
  request.threads = threads;
  request.wanted = sample;
  return bounds_and_envelopes(p, in, request).envelopes;
}

}  // namespace flashproof::bounds
