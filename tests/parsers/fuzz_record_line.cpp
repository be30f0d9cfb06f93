// libFuzzer target: one line of a campaign's cases.jsonl as `flashproof report` reads it (JSON, then
// the record's fields). A bad line must be a one-line std::invalid_argument (the report skips it).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "core/json.h"
#include "report/fuzz_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)flashproof::report::fuzz_record_from_json(flashproof::json::parse(text));
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
