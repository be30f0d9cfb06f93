// The properties every attention implementation is held to (issue 7, SPEC.md "Verdicts"), each a
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
#include "properties/generators.h"

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
};

const std::vector<Property>& all_properties();
const Property* find_property(const std::string& name);

}  // namespace flashproof::properties
