// results.json: the report's numbers as one JSON document (schema: docs/reports.md).
#pragma once

#include "core/json.h"
#include "report/report_model.h"

namespace flashproof::report {

Json results_json(const Report& report);

}  // namespace flashproof::report
