// libFuzzer target: the JSON reader every input file goes through (case files, cases.jsonl lines,
// campaign.json, the exchange's case.json / meta.json / index.json). Bad text must be a one-line
// std::invalid_argument; anything else (a crash, another exception, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    namespace json = flashproof::json;
    const json::Value j = json::parse(text);
    // What was read must write and read back the same, in every layout (numbers compare by value:
    // "-0" reads as the integer 0).
    for (const json::Layout& layout : {json::one_line(), json::indented(), json::unbroken(json::indented())})
      if (json::parse(json::write(j, layout)) != j) __builtin_trap();
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
