// Theorem 6's model of the online softmax over fp32 (fp_proofs.cpp): the input domain, blocks of
// symbolic logits and their weights.
//
// Logits in log2 units are -inf (masked) or finite with |x| <= 2^66 (docs/spec.md "Valid domain":
// |softmax_scale * q.k| <= 2^64 times log2(e) < 2). A running state (m, l) has m = -inf or
// |m| <= 2^100, l finite in [+0, 2^100] with its sign bit clear, and the invariant
//   m = -inf  =>  l = +0        (no visible key yet; the accumulator is 0 as well)
//   m finite  =>  l >= 1        (the max's own weight is exp2(+0) = 1)
// which the FA2 and FA1 steps are proved to preserve (and the initial state (-inf, +0) and a block's
// own statistics satisfy). The second half is needed: without it, a subnormal new l in fa1_combine
// gives 1/l = +inf and a coefficient +inf or 0 * inf = NaN.
#pragma once

#include <string>
#include <vector>

#include "proofs/fp32_terms.h"

namespace flashproof::proofs::fp32 {

constexpr int kBlock = 2;  // logits per key block

expr logit_domain(const expr& x);
expr state_invariant(const expr& m, const expr& l);
expr state_domain(const expr& m, const expr& l);

// A key block: its logits and their max (D::max left to right).
struct Block {
  std::vector<expr> logits;
  expr max;
};

Block make_block(const std::vector<expr>& logits);
std::vector<expr> f32_vars(z3::context& c, const std::string& prefix);  // prefix0 .. prefix{kBlock-1}
std::vector<expr> block_domain(const Block& b);                          // logit_domain of each logit
std::vector<expr> weights(const Block& b, const expr& offset);           // shifted_exp2(x, offset) each
expr sum(const std::vector<expr>& xs);                                   // left to right
expr dot(const std::vector<expr>& p, const std::vector<expr>& v);        // left to right

// An exponent factor or weight exp2(x - offset) for the new max: in [0,1], +0 for x = -inf, and 1
// for x the (finite) new max.
expr weight_ok(const expr& weight, const expr& x, const expr& new_max);

}  // namespace flashproof::proofs::fp32
