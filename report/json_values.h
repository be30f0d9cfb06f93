// Reading the numbers of fuzz records (non-finite ones are the strings "inf", "-inf", "nan") and
// building the Json values that results.json is written from (core/json.h writes them).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"

namespace flashproof::report {

// The number at v: a JSON number, or one of the strings "inf", "-inf", "nan"; nullopt when v is
// missing or anything else.
std::optional<double> read_number(const Json* v);
// The string at v, or fallback when v is missing or not a string.
std::string read_string(const Json* v, std::string_view fallback = "");

// x as a JSON value: a number literal that reads back as the same double, or for a non-finite x
// the string "inf", "-inf" or "nan", as the records write them.
Json json_number(double x);
// An optional number: null when absent.
Json json_number(std::optional<double> x);
Json json_integer(long long x);
Json json_string(std::string_view s);
Json json_bool(bool b);
Json json_object();
Json json_array();

// Appends a member to an object (keys are the caller's to keep unique).
Json& add(Json& object, std::string_view key, Json value);
// Appends an item to an array.
Json& push(Json& array, Json value);

}  // namespace flashproof::report
