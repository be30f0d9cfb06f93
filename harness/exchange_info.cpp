#include "harness/exchange_info.h"

#include <stdexcept>

#include "core/json.h"

namespace flashproof::exchange {

std::optional<GqaGradientReduction> declared_gqa_gradients(std::string_view text, const std::string& source) {
  Json j;
  try {
    j = parse_json(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
  const Json* v = j.type == Json::Type::object ? j.find("gqa_gradients") : nullptr;
  if (v == nullptr) return std::nullopt;
  if (v->type == Json::Type::string && v->text == "per-head-rounded") return GqaGradientReduction::per_head_rounded;
  if (v->type != Json::Type::string || v->text != "group-sum")
    throw std::invalid_argument(source + ": \"gqa_gradients\" must be \"group-sum\" or \"per-head-rounded\"");
  return GqaGradientReduction::group_sum;
}

}  // namespace flashproof::exchange
