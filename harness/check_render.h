// A check record rendered: the JSON record (`flashproof check --json`, `replay --json`, embedded in
// fuzz campaign records) and the table a person reads.
#pragma once

#include <string>

#include "core/json.h"
#include "harness/check.h"

namespace flashproof {

// The record as a JSON value (docs/case-files.md and docs/fuzz.md describe its fields).
json::Value check_record_json(const CheckRecord& r);
// Where its line breaks go: one line per top-level member (in_domain, inputs_in_domain and
// domain_note share one), one line per tensor, with errors, baseline_errors, rigorous_bound and a
// sample's rows and columns starting lines of their own. A fuzz record embeds it unbroken.
json::Layout check_record_layout();

// check_record_json in check_record_layout, with a final line break.
std::string to_json(const CheckRecord& r);
std::string to_table(const CheckRecord& r);

}  // namespace flashproof
