// The members flashproof reads of a backend's info.json in an exchange (docs/exchange.md):
// "gqa_gradients" and "support". In its own file, apart from the imported implementation and its registry, so
// that the parser fuzzer (tests/parsers/fuzz_exchange_info.cpp) builds it alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/attention_impl.h"

namespace flashproof::exchange {

// The reduction info.json's text (read from `source`) declares: "group-sum" or "per-head-rounded";
// nullopt when it does not say (no such member, or not an object). Throws std::invalid_argument
// with one line ("SOURCE: ...") when the text is not JSON or the member holds another value.
std::optional<GqaGradientReduction> declared_gqa_gradients(std::string_view text, const std::string& source);

// The support info.json declares (harness/support_record.h's JSON form); nullopt when it has no
// "support" member. Throws std::invalid_argument with one line ("SOURCE: support: ...") when the
// text is not JSON or the declaration cannot be read.
std::optional<Support> declared_support(std::string_view text, const std::string& source);

}  // namespace flashproof::exchange
