// How a record of cases.jsonl is laid out: on one line, `{"a": 1, "b": [2]}`, except its "case"
// (a case file, harness/case_file.h) and its "record" (a check record, harness/check_render.h),
// which keep the layout their own files have with the line breaks and indentation left out, as
// cases.jsonl has always been written (docs/fuzz.md).
#pragma once

#include "core/json.h"

namespace flashproof::fuzz {

json::Layout fuzz_record_layout();

}  // namespace flashproof::fuzz
