// results.json: the report's numbers as one JSON document (schema: docs/reports.md).
#pragma once

#include "core/json.h"
#include "report/report_model.h"

namespace flashproof::report {

json::Value results_json(const Report& report);

// How results.json is written: indented, the report's own numbers as their shortest round-trip
// text, and each input's campaign.json and ended.json with %.17g, as the campaign wrote them.
json::Layout results_layout();

}  // namespace flashproof::report
