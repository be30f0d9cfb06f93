// The naive same-dtype attention: the baseline of the "k x baseline error" rule. It does what an
// unfused framework implementation does: scores in fp32 from dtype inputs, softmax in fp32, P
// rounded to the dtype, O accumulated in fp32 and rounded to the dtype; the backward likewise
// (dP, dS rounded to the dtype between the fp32-accumulated products). Masked pairs are skipped,
// not multiplied by a zero weight, so NaN stored at masked positions cannot reach an output (the
// memory property of properties/ holds every implementation to this for keys no row sees).
// With a sample (ForwardArgs::wanted, BackwardArgs::wanted; core/output_sample.h) it writes only
// the wanted outputs, each bit for bit as the full run computes it, and leaves the others as they
// were: O, LSE and dQ of a row cost O(seqlen_k x head_dim); dK, dV of a key need P, dP and D of
// every row that sees it, computed once per such row for all the wanted keys it sees. Every flaw
// below keeps its defect under a sample.
#pragma once

#include <memory>
#include <string_view>

#include "core/attention_impl.h"

namespace flashproof {

// Deliberate defects, for showing that a check catches what it claims to (properties/). Each mimics a
// kind of real kernel bug (docs/spec.md "Bug classes"); none is registered as an implementation.
enum class NaiveFlaw {
  none,
  mask_off_by_one,       // the window admits one key too many on the right (causal sees j = i + 1)
  missing_rescale,       // online softmax over 16-key blocks that never rescales the old sum and O
  wrong_lse,             // LSE returned as the row max, without log(l)
  dk_without_group_sum,  // GQA: dK keeps the last query head's share instead of the group's sum
  nan_on_empty_row,      // a row that sees no key gets 0/0 = NaN instead of O = 0, LSE = +inf
  odd_rows_reversed,     // odd query rows sum P V in reverse key order (accurate, not bitwise)
  alternating_order,     // every other call sums in reverse key order (not reproducible)
  batch_dependent_order, // sums in reverse key order when batch > 1
  wrong_gqa_head,        // query head h reads K/V head h % heads_kv instead of h / group
  saturating_output,     // O clamped to [-2, 2]
  multiplies_masked,     // masked keys' V multiplied by their zero weight instead of skipped
  // A defect of one tile shape only (with_alternate_tiles() is the other shape):
  alternate_tiles_skip_rescale,  // correct itself; its alternate tiles are missing_rescale
  shipped_tiles_skip_rescale,    // missing_rescale itself; its alternate tiles are the baseline
  // Packed batches only (not in kNaiveFlaws, whose every flaw shows on dense problems):
  packed_ignores_sequences,  // the window over the whole packed storage: rows see other sequences' keys
  // The score modification only (likewise not in kNaiveFlaws):
  softcap_missing_derivative,  // the backward's dS not multiplied by the cap's 1 - tanh^2
  softcap_unscaled_argument,   // c tanh(s) instead of c tanh(s / c) (the division by the cap lost)
  alibi_top_left,              // ALiBi's distance aligned top-left (|i - j|) instead of bottom-right
  alibi_wrong_sign,            // the ALiBi bias added with the wrong sign (+slope |distance|)
  // KV caches only (likewise):
  cache_allocated_length,     // each sequence reads its cache up to the capacity, not its used length
  later_sequences_unwritten,  // O and LSE of the sequences after the first never written
  pages_in_order,             // the block table ignored: sequence b's page t read from pool page b pages + t
};
// The flaws that show only on a packed batch, with a score modification or with a KV cache.
inline constexpr NaiveFlaw kNaiveFeatureFlaws[] = {NaiveFlaw::packed_ignores_sequences,
                                                   NaiveFlaw::softcap_missing_derivative,
                                                   NaiveFlaw::softcap_unscaled_argument,
                                                   NaiveFlaw::alibi_top_left, NaiveFlaw::alibi_wrong_sign,
                                                   NaiveFlaw::cache_allocated_length,
                                                   NaiveFlaw::later_sequences_unwritten, NaiveFlaw::pages_in_order};
inline constexpr NaiveFlaw kNaiveFlaws[] = {
    NaiveFlaw::mask_off_by_one,   NaiveFlaw::missing_rescale,       NaiveFlaw::wrong_lse,
    NaiveFlaw::dk_without_group_sum, NaiveFlaw::nan_on_empty_row,   NaiveFlaw::odd_rows_reversed,
    NaiveFlaw::alternating_order, NaiveFlaw::batch_dependent_order, NaiveFlaw::wrong_gqa_head,
    NaiveFlaw::saturating_output, NaiveFlaw::multiplies_masked, NaiveFlaw::alternate_tiles_skip_rescale,
    NaiveFlaw::shipped_tiles_skip_rescale};
const char* naive_flaw_name(NaiveFlaw flaw);  // "mask-off-by-one", ...
// The flawed baseline named "naive-flawed:<flaw name>" (as case files of its failures name it);
// nullptr for any other name.
std::unique_ptr<AttentionImpl> make_flawed_naive(std::string_view impl_name);

// flaw = none is the baseline ("naive"); otherwise "naive-flawed:<flaw name>".
std::unique_ptr<AttentionImpl> make_naive_attention(NaiveFlaw flaw = NaiveFlaw::none);

// The second tier's baseline (docs/spec.md "Verdicts"), "naive-dtype-scores", not registered: the
// same computation in the dtype as FlashAttention's tests' reference with upcasting off: q * scale
// rounded to the dtype, each score q'.k accumulated in fp32 and rounded to the dtype (the soft cap
// and ALiBi in fp32 on it, rounded again), softmax in fp32, P rounded, O = P V in fp32 rounded; the
// backward likewise (dP, dS rounded; dQ the rounded gradient of q' times scale, dK from q').
std::unique_ptr<AttentionImpl> make_dtype_scores_baseline();

}  // namespace flashproof
