// Reading the members of fuzz records, campaign.json and ended.json (core/json.h parses them) as
// the report always has: a non-finite number is the string "inf", "-inf" or "nan"; an integer
// (a version, a shard, a shape) may be written as a string; a seed is text, string or number.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"

namespace flashproof::report {

// The member named key of the object at v; nullptr when v is nullptr, not an object or has no
// such member (so that lookups chain through absent members).
const json::Value* member(const json::Value* v, std::string_view key);

// The number at v: a JSON number, or one of the strings "inf", "-inf", "nan"; nullopt when v is
// missing or anything else.
std::optional<double> read_number(const json::Value* v);
// The string at v, or fallback when v is missing or not a string.
std::string read_string(const json::Value* v, std::string_view fallback = "");
// The integer at v: an integer number within the range of a long long, or a string holding one
// in decimal ("-5", not "+5" or "5.0"); nullopt otherwise.
std::optional<long long> read_integer(const json::Value* v);
// A seed's or an id's text: a string's own text, a number's decimal text (an integer exactly, any
// other number as its shortest round-trip text); "" for anything else or when v is missing.
std::string scalar_text(const json::Value* v);

}  // namespace flashproof::report
