// libFuzzer target: a backend's info.json in a case exchange as flashproof reads it (the member
// "gqa_gradients", harness/exchange_info.h). Bad text must be a one-line std::invalid_argument; what
// is read must be what the text says, and the same when written back.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "core/json.h"
#include "harness/exchange_info.h"
#include "harness/support_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using flashproof::GqaGradientReduction;
  using flashproof::exchange::declared_gqa_gradients;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const std::optional<GqaGradientReduction> declared = declared_gqa_gradients(text, "fuzz/info.json");
    namespace json = flashproof::json;
    const json::Value j = json::parse(text);
    const json::Value* v = json::find(j, "gqa_gradients");
    if (declared.has_value() != (v != nullptr)) __builtin_trap();
    if (declared && *v != (*declared == GqaGradientReduction::group_sum ? "group-sum" : "per-head-rounded"))
      __builtin_trap();
    if (declared_gqa_gradients(json::write(j, json::indented()), "again") != declared) __builtin_trap();
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
  }
  // The declared support: a read one writes back to itself; a refusal is one line.
  try {
    if (const std::optional<flashproof::Support> s = flashproof::exchange::declared_support(text, "fuzz/info.json")) {
      namespace json = flashproof::json;
      const json::Value again = {{"support", json::Value(*s)}};
      if (flashproof::exchange::declared_support(json::write(again), "again") != s) __builtin_trap();
    }
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
