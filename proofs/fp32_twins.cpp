#include "proofs/fp32_twins.h"

namespace flashproof::proofs::fp32 {

algo::Fa2Rescale<expr> fa2_rescale_factor_of_block_max(expr running_max, expr block_max) {
  const expr m = D::max(running_max, block_max);
  const expr offset = algo::exponent_offset(m);
  return {m, offset, algo::shifted_exp2(block_max, offset)};
}

algo::Fa2Rescale<expr> fa2_rescale_unguarded(expr running_max, expr block_max) {
  const expr m = D::max(running_max, block_max);
  const expr offset = m;
  return {m, offset, algo::shifted_exp2(running_max, offset)};
}

algo::Fa1Combine<expr> fa1_combine_unguarded(expr running_max, expr running_sum, expr block_max,
                                             expr block_sum) {
  const expr m = D::max(running_max, block_max);
  const expr offset = algo::exponent_offset(m);
  const expr old_part = D::mul(algo::shifted_exp2(running_max, offset), running_sum);
  const expr block_factor = algo::shifted_exp2(block_max, offset);
  const expr l = old_part + D::mul(block_factor, block_sum);
  const expr inv = D::div(D::lit(1, l), l);
  return {m, l, D::mul(old_part, inv), D::mul(block_factor, inv)};
}

algo::RowOutput<expr> finalize_row_unguarded(expr m, expr l, expr ln2) {
  const expr inv = D::div(D::lit(1, l), l);
  const expr lse = D::mul(m, ln2) + D::log(l);
  return {inv, lse};
}

expr recompute_prob_unclamped(expr x, expr lse_in_log2) {
  const expr arg = x - lse_in_log2;
  return D::exp2(arg);
}

}  // namespace flashproof::proofs::fp32
