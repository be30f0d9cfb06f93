// The online-softmax step of one query row, in both forms the kernels use, and its finalisation.
// Every kernel builds its softmax from these functions in the order documented here, and the proofs
// (proofs/online_softmax_proofs.cpp, proofs/fp_proofs.cpp) instantiate the same functions.
//
// Units: logits enter in log2 units, x = scaled_logit(q.k, scale_log2) with scale_log2 =
// softmax_scale * log2(e), each product rounded on its own. The running max m is taken over these
// rounded values, so x <= m implies x - m <= 0 after rounding and every weight exp2(x - m) lies in
// [0, 1]. (An FMA x*c - m*c does not have this property: for logits near 2^64 its result can be
// 2^40 above zero and exp2 overflows.) Masked logits are -inf.
//
// FA2 form, per key block of a row (running state m, l, unnormalised accumulator acc):
//   r = fa2_rescale(m, block_max);  m = r.max;
//   l = rescale_accumulate(l, r.factor, sum_j p_j);  acc = rescale_accumulate(acc, r.factor, sum_j p_j v_j)
//   with p_j = shifted_exp2(x_j, r.offset).  At the end: out = finalize_row(m, l, ln2);
//   O = acc * out.inv_sum, LSE = out.lse.
// FA1 form, per key block (normalised O, running m, l; block statistics from its own max):
//   p~_j = shifted_exp2(x_j, exponent_offset(block_max)), block_sum = sum_j p~_j;
//   c = fa1_combine(m, l, block_max, block_sum);  O = c.coef_old * O + c.coef_block * sum_j p~_j v_j;
//   m = c.max; l = c.sum.  At the end LSE = finalize_row(m, l, ln2).lse.
// Merging two partial states (split keys; FA1's per-warp partials): merge_states.
// Initial state: m = -inf, l = 0, acc (or O) = 0.
#pragma once

#include "kernels/algo/domain.h"

namespace flashproof::algo {

// A logit in log2 units: softmax_scale * log2(e) * q.k, the product rounded on its own.
template <class T>
FP_HOST_DEVICE T scaled_logit(T s, T scale_log2) {
  return Domain<T>::mul(s, scale_log2);
}

// The -inf guard: the exponent offset for a running max. A row that has seen only masked logits
// has m = -inf; subtracting it would give -inf - (-inf) = NaN, so the offset is 0 instead and every
// weight exp2(-inf - 0) is 0.
template <class T>
FP_HOST_DEVICE T exponent_offset(T m) {
  using D = Domain<T>;
  return D::select(D::is_neg_inf(m), D::lit(0, m), m);
}

// The weight of a logit (or the rescale factor of a max) relative to an exponent offset.
template <class T>
FP_HOST_DEVICE T shifted_exp2(T x, T offset) {
  return Domain<T>::exp2(x - offset);
}

template <class T>
struct Fa2Rescale {
  T max;     // new running max
  T offset;  // exponent offset for this block's weights
  T factor;  // multiplies the old l and accumulator
};

// FA2: start a key block for one row whose block max is block_max.
template <class T>
FP_HOST_DEVICE Fa2Rescale<T> fa2_rescale(T running_max, T block_max) {
  const T m = Domain<T>::max(running_max, block_max);
  const T offset = exponent_offset(m);
  return {m, offset, shifted_exp2(running_max, offset)};
}

// factor * old: the rescale half of rescale_accumulate. The FA2 forward calls it on each
// accumulator element and lets the P V mma add the block's share (the "+ added" below, in the
// tensor core's accumulation), so the kernel's rescale is the proved one.
template <class T>
FP_HOST_DEVICE T rescale(T old, T factor) {
  return Domain<T>::mul(factor, old);
}

// old * factor + added: the FA2 update of l (added = sum of the block's weights) and of each
// accumulator element (added = the block's weighted sum of values).
template <class T>
FP_HOST_DEVICE T rescale_accumulate(T old, T factor, T added) {
  return rescale(old, factor) + added;
}

template <class T>
struct Fa1Combine {
  T max;         // new running max
  T sum;         // new running l
  T coef_old;    // multiplies the old normalised O
  T coef_block;  // multiplies the block's sum_j p~_j v_j
};

// FA1: fold a block with statistics (block_max, block_sum) into a row's normalised state. A row
// that still has no visible key (new l = 0) gets coefficients 0, so O stays 0 instead of 0/0.
template <class T>
FP_HOST_DEVICE Fa1Combine<T> fa1_combine(T running_max, T running_sum, T block_max, T block_sum) {
  using D = Domain<T>;
  const T m = D::max(running_max, block_max);
  const T offset = exponent_offset(m);
  const T old_part = D::mul(shifted_exp2(running_max, offset), running_sum);
  const T block_factor = shifted_exp2(block_max, offset);
  const T l = old_part + D::mul(block_factor, block_sum);
  const T zero = D::lit(0, l);
  const T inv = D::select(D::is_zero(l), zero, D::div(D::lit(1, l), l));
  return {m, l, D::mul(old_part, inv), D::mul(block_factor, inv)};
}

template <class T>
struct StateMerge {
  T max;     // merged max
  T sum;     // merged l
  T coef_a;  // multiplies state a's accumulator
  T coef_b;  // multiplies state b's accumulator
};

// Merge two unnormalised partial states (m_a, l_a, acc_a) and (m_b, l_b, acc_b) of the same row
// over disjoint key sets: acc = coef_a * acc_a + coef_b * acc_b. (-inf, 0, 0) is the identity.
template <class T>
FP_HOST_DEVICE StateMerge<T> merge_states(T max_a, T sum_a, T max_b, T sum_b) {
  using D = Domain<T>;
  const T m = D::max(max_a, max_b);
  const T offset = exponent_offset(m);
  const T coef_a = shifted_exp2(max_a, offset);
  const T coef_b = shifted_exp2(max_b, offset);
  return {m, D::mul(coef_a, sum_a) + D::mul(coef_b, sum_b), coef_a, coef_b};
}

template <class T>
struct RowOutput {
  T inv_sum;  // O = acc * inv_sum (FA2); 0 for a row with no visible key
  T lse;      // natural-log LSE = (m + log2 l) ln 2; +inf for a row with no visible key
};

// Finalisation of a row: l = 0 exactly when the row saw no visible key (the max weight is
// exp2(0) = 1 otherwise), and such a row gets O = 0 and LSE = +inf.
template <class T>
FP_HOST_DEVICE RowOutput<T> finalize_row(T m, T l, T ln2) {
  using D = Domain<T>;
  const auto empty = D::is_zero(l);
  const T inv = D::select(empty, D::lit(0, l), D::div(D::lit(1, l), l));
  const T lse = D::select(empty, D::pos_inf(l), D::mul(m, ln2) + D::log(l));
  return {inv, lse};
}

}  // namespace flashproof::algo
