// The property registry: every property with its name, what it states, its cases and the
// implementations it applies to, in the order case files and campaign records rely on.
#include "properties/properties.h"

#include <cstdint>
#include <string>

#include "kernels/registry.h"
#include "properties/gradient_check.h"
#include "properties/property_checks.h"

namespace flashproof::properties {
namespace {

using namespace checks;

bool always(const AttentionImpl&) { return true; }
bool has_alternate_tiles(const AttentionImpl& impl) { return impl.with_alternate_tiles() != nullptr; }
bool is_fa1(const AttentionImpl& impl) { return impl.name() == "fa1" && find_implementation("fa2") != nullptr; }
bool reproducible(const AttentionImpl& impl) { return impl.bitwise_reproducible_backward(); }
bool takes_packed(const AttentionImpl& impl) { return impl.declared_support().packed; }
bool takes_score_mod(const AttentionImpl& impl) {
  const Support s = impl.declared_support();
  return s.softcap || s.alibi;
}
bool takes_softcap(const AttentionImpl& impl) { return impl.declared_support().softcap; }
bool takes_pages(const AttentionImpl& impl) { return impl.declared_support().paged; }

}  // namespace

const std::vector<Property>& all_properties() {
  static const std::vector<Property> list = {
      {"differential", "every element within its rigorous bound, no NaN/inf where the reference is finite, no finite value where it overflows", MaskChoice::any,
       true, differential, always},
      {"accuracy-regression", "error <= k x the naive baseline's (dQ, dK of a flash backward: + the given O's share of D) + rounding floor (k = 2 forward, 3 backward)",
       MaskChoice::any, true, accuracy_regression, always},
      {"key-value-permutation", "permuting keys and values jointly leaves O and LSE unchanged (no mask)",
       MaskChoice::none, false, key_value_permutation, always},
      {"query-permutation", "permuting query rows permutes O and LSE, bitwise (no mask)", MaskChoice::none, false,
       query_permutation, always},
      {"value-scaling", "O(Q, K, +-2^e V) = +-2^e O (fp16: bitwise where normal); LSE unchanged", MaskChoice::any, false,
       value_scaling, always},
      {"prefix-independence", "K/V a row cannot see do not change its O and LSE, bitwise", MaskChoice::masked, false,
       prefix_independence, always},
      {"gqa-equals-mha", "GQA equals MHA with K/V heads repeated: O, LSE (and reproducible dQ) bitwise",
       MaskChoice::any, true, gqa_equals_mha, always},
      {"batch-independence", "each batch entry equals its run alone, bitwise", MaskChoice::any, true,
       batch_independence, always},
      {"forward-determinism", "the forward is bitwise reproducible under every schedule", MaskChoice::any, false, forward_determinism,
       always},
      // At least three key blocks of 128 (the largest shipped block_n): fewer contributions to a dQ
      // element commute exactly (0 + a + b = 0 + b + a), so no order of additions could show.
      {"backward-determinism", "the backward is bitwise reproducible under every schedule (implementations that promise it)",
       MaskChoice::any, true, backward_determinism, reproducible, 0, 1, 257},
      {"empty-rows", "rows seeing no key: O = 0, LSE = +inf, dQ = 0; keys no row sees: dK = dV = 0",
       MaskChoice::masked, true, empty_rows, always},
      {"memory", "outputs exactly in strided views; NaN at unseen keys and past the ends never reaches them",
       MaskChoice::local, true, memory, always},
      {"fa1-matches-fa2", "FA1 and FA2 agree within two rounding floors on the same inputs", MaskChoice::any, true,
       fa1_matches_fa2, is_fa1},
      {"tile-independence",
       "with the alternate tile shapes: within the rigorous bound, and within 2x the bound of the shipped shapes",
       MaskChoice::any, true, tile_independence, has_alternate_tiles, 0, kTileIndependenceMinSeqlen},
      // MPFR forwards at 256 bits: small cases only.
      {"gradient-finite-differences",
       "<dQ|dK|dV, u> within tolerance of central differences of the reference's MPFR forward loss", MaskChoice::any,
       true, gradient_finite_differences, always, std::int64_t{1} << 15},
      {"packed-equals-sequences",
       "a packed batch equals its sequences run alone, bitwise (O, LSE, dK, dV; reproducible dQ); sequences without "
       "rows or keys get the exact empty values (implementations that take packed batches)",
       MaskChoice::any, true, packed_equals_sequences, takes_packed, std::int64_t{1} << 15},
      {"score-mod-differential",
       "the differential verdict with a soft cap (1 to 50) and ALiBi slopes (the models', or extreme of either sign) "
       "drawn from the case's seed (implementations that take them)",
       MaskChoice::any, true, score_mod_differential, takes_score_mod, std::int64_t{1} << 16},
      {"softcap-infinity",
       "a soft cap of 2^100 is no cap: the capped and uncapped runs within their two rigorous bounds of each other "
       "(implementations that take a cap; logits up to 2^30)",
       MaskChoice::any, true, softcap_infinity, takes_softcap, std::int64_t{1} << 15},
      {"page-order-invariance",
       "the batch as a paged KV cache (used lengths from the case's seed): within the rigorous bound, and O, LSE "
       "bitwise the same with pages shuffled as in order (implementations that take paged caches; forward)",
       MaskChoice::any, false, page_order_invariance, takes_pages, std::int64_t{1} << 15},
  };
  return list;
}

const Property* find_property(const std::string& name) {
  for (const Property& p : all_properties())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace flashproof::properties
