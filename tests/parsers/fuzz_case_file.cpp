// libFuzzer target: case files (flashproof replay FILE; the exchange's case.json). A bad file must be
// a one-line std::invalid_argument ("case file SOURCE: PROBLEM"); a file that parses must write back
// to text that parses to the same case.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "harness/case_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const flashproof::CaseFile f = flashproof::case_from_json(text, "fuzz");
    const std::string written = flashproof::case_to_json(f.c, f.options, f.note, f.property);
    if (flashproof::case_to_json(flashproof::case_from_json(written, "again").c, f.options, f.note, f.property) != written)
      __builtin_trap();
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
  }
  return 0;
}
