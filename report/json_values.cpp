#include "report/json_values.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace flashproof::report {

std::optional<double> read_number(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (v->type == Json::Type::number) return v->number();
  if (v->type != Json::Type::string) return std::nullopt;
  if (v->text == "inf") return std::numeric_limits<double>::infinity();
  if (v->text == "-inf") return -std::numeric_limits<double>::infinity();
  if (v->text == "nan") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

std::string read_string(const Json* v, std::string_view fallback) {
  return v != nullptr && v->type == Json::Type::string ? v->text : std::string(fallback);
}

Json json_number(double x) {
  if (std::isnan(x)) return json_string("nan");
  if (std::isinf(x)) return json_string(x > 0 ? "inf" : "-inf");
  Json v;
  v.type = Json::Type::number;
  char buf[32];
  // Shortest text that reads back as x: stable, and as exact as 17 digits.
  const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
  v.text.assign(buf, end);
  return v;
}

Json json_number(std::optional<double> x) { return x ? json_number(*x) : Json{}; }

Json json_integer(long long x) {
  Json v;
  v.type = Json::Type::number;
  v.text = std::to_string(x);
  return v;
}

Json json_string(std::string_view s) {
  Json v;
  v.type = Json::Type::string;
  v.text = s;
  return v;
}

Json json_bool(bool b) {
  Json v;
  v.type = Json::Type::boolean;
  v.boolean = b;
  return v;
}

Json json_object() {
  Json v;
  v.type = Json::Type::object;
  return v;
}

Json json_array() {
  Json v;
  v.type = Json::Type::array;
  return v;
}

Json& add(Json& object, std::string_view key, Json value) {
  object.members.emplace_back(std::string(key), std::move(value));
  return object.members.back().second;
}

Json& push(Json& array, Json value) {
  array.items.push_back(std::move(value));
  return array.items.back();
}

}  // namespace flashproof::report
