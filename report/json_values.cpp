#include "report/json_values.h"

#include <charconv>

namespace flashproof::report {

const json::Value* member(const json::Value* v, std::string_view key) {
  return v != nullptr ? json::find(*v, key) : nullptr;
}

std::optional<double> read_number(const json::Value* v) {
  return v != nullptr ? json::record_number(*v) : std::nullopt;
}

std::string read_string(const json::Value* v, std::string_view fallback) {
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string(fallback);
}

std::optional<long long> read_integer(const json::Value* v) {
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) return json::integer(*v);
  const std::string& text = v->get_ref<const std::string&>();
  long long x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return x;
}

std::string scalar_text(const json::Value* v) {
  if (v == nullptr) return "";
  if (v->is_string()) return v->get<std::string>();
  return v->is_number() ? json::write(*v, json::one_line(json::Digits::shortest)) : "";
}

}  // namespace flashproof::report
