#include "harness/exchange_info.h"

#include <stdexcept>

#include "core/json.h"
#include "harness/support_record.h"

namespace flashproof::exchange {

std::optional<GqaGradientReduction> declared_gqa_gradients(std::string_view text, const std::string& source) {
  const json::Value j = json::parse(text, source);
  const json::Value* v = json::find(j, "gqa_gradients");
  if (v == nullptr) return std::nullopt;
  const std::optional<std::string> name = json::string(*v);
  if (name == "per-head-rounded") return GqaGradientReduction::per_head_rounded;
  if (name != "group-sum")
    throw std::invalid_argument(source + ": \"gqa_gradients\" must be \"group-sum\" or \"per-head-rounded\"");
  return GqaGradientReduction::group_sum;
}

std::optional<Support> declared_support(std::string_view text, const std::string& source) {
  const json::Value j = json::parse(text, source);
  const json::Value* v = json::find(j, "support");
  if (v == nullptr) return std::nullopt;
  try {
    return v->get<Support>();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
}

}  // namespace flashproof::exchange
