// The properties every attention implementation is held to (docs/properties.md), each a
// function of (implementation, case) that says whether it holds and, if not, why in one line.
// The RapidCheck suite (tests/properties) generates the cases; fuzz campaigns can call the same
// functions, so each check exists once.
//
// Bitwise properties rest on how the shipped implementations compute: each query row's forward
// arithmetic depends only on that row's inputs and the key order, never on other rows or batch
// entries. A plug-in that batches rows differently may legitimately fail them; the list says
// which properties are bitwise.
#pragma once

#include <string>
#include <vector>

#include "core/attention_impl.h"
#include "harness/check.h"
#include "properties/generator_limits.h"

namespace flashproof::properties {

struct Outcome {
  bool holds = true;
  std::string why;                // one line when it does not hold
  std::vector<std::string> tags;  // extra classification (e.g. "out of domain")
};

struct Property {
  const char* name;  // "differential", "query-permutation", ...
  const char* what;  // one line
  MaskChoice mask;   // which masks the property's cases use
  bool backward;     // whether its cases run the backward
  Outcome (*check)(AttentionImpl& impl, const Case& c);
  // Whether the property applies to the implementation (e.g. backward determinism only to those
  // that promise a bitwise reproducible backward).
  bool (*applies)(const AttentionImpl& impl);
  std::int64_t max_work = 0;  // a tighter work cap for its cases (0: the generator's)
  std::int64_t min_seqlen = 1;  // shortest sequence lengths of its cases
  std::int64_t min_seqlen_k = 0;  // when > 0, the shortest key sequence (GenLimits::min_seqlen_k)
};

// How closely FA1 and FA2 must agree on the same inputs, in the harness's rounding floors. A floor
// is floor_ulps (1; LSE 4) units u of the dtype's rounding at the tensor's largest reference
// magnitude M, between half an ulp and one ulp of M. Each kernel's final rounding to the dtype can
// land on either side of a rounding boundary, so two correct results may differ by an ulp of M,
// up to 2 floors, before any difference in how they got there. The kernels' paths differ little
// (the same products, P rounded against different maxima, fp32 sums in other orders): over the
// FA1 test matrix the largest difference measured on the emulator was 0.90 floors (O), 0.78 (dK),
// 0.68 (dQ), 0.49 (LSE), 0.41 (dV). The rule allows the two final roundings and nothing else.
inline constexpr double kFa1Fa2AgreementFloors = 2;

// `impl` (FA1 in the suite) against the registered "fa2" on the case's inputs: every output within
// kFa1Fa2AgreementFloors rounding floors of `record` (the case's harness check of `impl`), NaN and
// infinities in the same places. Holds (tagged) when fa2 is missing or does not take the case.
Outcome matches_fa2(AttentionImpl& impl, const Case& c, const CheckRecord& record);

const std::vector<Property>& all_properties();
const Property* find_property(const std::string& name);

}  // namespace flashproof::properties
