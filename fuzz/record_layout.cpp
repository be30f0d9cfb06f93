#include "fuzz/record_layout.h"

#include "harness/check_render.h"

namespace flashproof::fuzz {

json::Layout fuzz_record_layout() {
  json::Layout line = json::one_line();
  line.inner = {{"case", json::unbroken(json::indented())}, {"record", json::unbroken(check_record_layout())}};
  return line;
}

}  // namespace flashproof::fuzz
