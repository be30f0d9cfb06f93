// The FA2 kernels as harness implementations, through the shared flash adapter
// (kernels/flash/flash_attention.h): host tensors staged into target memory, on the GPU when one is
// usable, otherwise on the emulator.
#include "kernels/fa2/fa2_attention.h"

#include <string>

#include "kernels/fa2/api.h"
#include "kernels/flash/flash_attention.h"
#include "kernels/flash/validate.h"

namespace flashproof {

const char* fa2_score_mod_flaw_name(kernels::FlashScoreModFlaw flaw) {
  switch (flaw) {
    case kernels::FlashScoreModFlaw::none: return "none";
    case kernels::FlashScoreModFlaw::missing_softcap_derivative: return "missing_softcap_derivative";
    case kernels::FlashScoreModFlaw::alibi_top_left: return "alibi_top_left";
    case kernels::FlashScoreModFlaw::alibi_wrong_sign: return "alibi_wrong_sign";
  }
  return "?";
}

const char* fa2_decode_flaw_name(kernels::FlashDecodeFlaw flaw) {
  switch (flaw) {
    case kernels::FlashDecodeFlaw::none: return "none";
    case kernels::FlashDecodeFlaw::split_skips_last_block: return "split_skips_last_block";
    case kernels::FlashDecodeFlaw::combine_without_empty_guard: return "combine_without_empty_guard";
    case kernels::FlashDecodeFlaw::page_from_allocated_length: return "page_from_allocated_length";
    case kernels::FlashDecodeFlaw::later_sequences_unwritten: return "later_sequences_unwritten";
    case kernels::FlashDecodeFlaw::keys_before_append: return "keys_before_append";
  }
  return "?";
}

std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic) {
  return make_fa2_attention(deterministic, kernels::FlashScoreModFlaw::none);
}

std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic, kernels::FlashScoreModFlaw flaw) {
  std::string name = deterministic ? "fa2-deterministic" : "fa2";
  if (flaw != kernels::FlashScoreModFlaw::none) name += std::string("~") + fa2_score_mod_flaw_name(flaw);
  return make_flash_attention({
      .name = name,
      .description = deterministic ? "FlashAttention-2 kernels of this repository, deterministic backward (no atomics)"
                                   : "FlashAttention-2 kernels of this repository (tensor cores; fp16, bf16)",
      .limits = &kernels::flash_limits(algo::KernelFamily::fa2),
      .forward = &kernels::fa2_forward,
      .backward = &kernels::fa2_backward,
      .deterministic = deterministic,
      .score_mod_flaw = flaw,
  });
}

}  // namespace flashproof

namespace flashproof {

std::unique_ptr<AttentionImpl> make_fa2_attention(bool deterministic, kernels::FlashDecodeFlaw flaw) {
  std::string name = deterministic ? "fa2-deterministic" : "fa2";
  if (flaw != kernels::FlashDecodeFlaw::none) name += std::string("~") + fa2_decode_flaw_name(flaw);
  return make_flash_attention({
      .name = name,
      .description = "FlashAttention-2 kernels of this repository, a deliberately broken decode path",
      .limits = &kernels::flash_limits(algo::KernelFamily::fa2),
      .forward = &kernels::fa2_forward,
      .backward = &kernels::fa2_backward,
      .deterministic = deterministic,
      .decode_flaw = flaw,
  });
}

}  // namespace flashproof
