// The record layer: every record type's JSON form, written and read in this one place
// (nlohmann's to_json / from_json convention), so that a field has one name and one spelling in
// every file flashproof writes: case files (harness/case_file.h), the exchange's case.json and
// meta.json (harness/exchange.h), the check record (`check --json`, fuzz records), Python's params.
//
// A problem is written as flat members of the object that holds it: "dtype", the six sizes
// (Problem::sizes()), "window_left", "window_right", "scale" (the scale given, or null for the
// default), "softmax_scale" (the fp32 value every implementation uses) and, for a packed batch only,
// "cu_seqlens_q" and "cu_seqlens_k" (arrays of integers); where set, "softcap" (a number) and
// "alibi_slopes" (one number per query head). A case adds "impl",
// "distribution", "seed" (a decimal string: readers that turn numbers into doubles keep it),
// "backward" and "schedule" (only when not 0). Readers reject unknown fields and name the field in
// every message; what they accept of older files is listed at each reader.
#pragma once

#include <string>

#include "core/json.h"
#include "harness/check.h"

namespace flashproof {

// ---- Problem ----
void to_json(json::Value& j, const Problem& p);
// A problem object as to_json writes it ("softmax_scale" optional; when present it must be the
// scale that "scale" and "head_dim" give). Throws std::invalid_argument naming the field; the
// problem is not validated here (make a ValidProblem of it).
void from_json(const json::Value& j, Problem& p);

// ---- Case (a problem and what generates and runs it) ----
void to_json(json::Value& j, const Case& c);
void from_json(const json::Value& j, Case& c);

// ---- CheckOptions (the options that decide a verdict: a case file's "check" object) ----
// Not written: reference::Options::threads (results do not depend on it), ::mutation (tests of the
// reference only), and the options outside case files (envelope_slack, vacuous_envelope_fraction,
// regression_lse_fraction, bound_scale). Throws std::invalid_argument for a non-finite value.
void to_json(json::Value& j, const CheckOptions& o);
// Every member optional (absent: the default).
void from_json(const json::Value& j, CheckOptions& o);

// ---- Case files ----
inline constexpr const char* kCaseFileFormat = "flashproof-case";
// Version 2 (this one): the record layer's spellings. Version 1, still read: the distribution as
// "dist", no "softmax_scale".
inline constexpr int kCaseFileVersion = 2;

struct CaseFile {
  Case c;
  CheckOptions options;  // threads 0 (all), mutation none
  std::string note;
  // Set when a property failed on the case (properties/properties.h): replay then re-runs that
  // property rather than the plain check. Written only when not empty.
  std::string property;
};
void to_json(json::Value& j, const CaseFile& f);
// Reads versions 1 and 2 and validates the problem (a case file holds a valid case).
void from_json(const json::Value& j, CaseFile& f);

// ---- The check record (`flashproof check --json`, `replay --json`, embedded in fuzz records) ----
// A tensor's "errors" and "baseline_errors" carry every count that can fail it, so that a reader
// can tell by which rule it failed (fuzz/failure_signature.h); "loose_reference" was added for that
// on 2026-11-28 (docs/case-files.md): a record written before has none, which readers take as 0.
// "rigorous_bound.worst_element", "first_nan" and "first_inf" (the elements a failure names,
// TensorCheck::worst_element, first_nan, first_inf; null where there is none) were added on 2026-11-28:
// a record written before has none, which readers take as null.
void to_json(json::Value& j, const TensorCheck& t);
void to_json(json::Value& j, const CheckRecord& r);

}  // namespace flashproof
