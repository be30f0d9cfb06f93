#include "report/fuzz_record.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>

#include "report/json_values.h"

namespace flashproof::report {
namespace {

bool is_true(const json::Value* v) { return v != nullptr && v->is_boolean() && v->get<bool>(); }

TensorResult tensor_from_json(const json::Value& t) {
  TensorResult r;
  r.name = read_string(json::find(t, "name"), "?");
  r.verdict = parse_verdict(read_string(json::find(t, "verdict"), "?"));
  r.regression = is_true(json::find(t, "regression"));
  const json::Value* errors = json::find(t, "errors");
  if (errors != nullptr) {
    r.max_ulps = read_number(member(errors, "max_ulps"));
    // Where the reference settled no element's rounding, max_ulps (0) measures nothing.
    const std::optional<double> unknown = read_number(member(errors, "ulps_unknown")),
                                count = read_number(member(errors, "count"));
    if (unknown && count && *unknown > 0 && *unknown >= *count) r.max_ulps.reset();
    r.max_rel = read_number(member(errors, "max_rel"));
    r.max_abs = read_number(member(errors, "max_abs"));
    r.nan_mismatch = read_number(member(errors, "nan_mismatch")).value_or(0);
    r.inf_mismatch = read_number(member(errors, "inf_mismatch")).value_or(0);
  }
  const json::Value* applies = json::find(t, "regression_applies");
  if (applies == nullptr || !applies->is_boolean() || applies->get<bool>())
    r.regression_tolerance = read_number(json::find(t, "tolerance"));
  if (const json::Value* b = json::find(t, "baseline_errors")) {
    r.baseline_max_abs = read_number(member(b, "max_abs"));
    // Where the baseline is NaN or inf against a finite exact value its error is unbounded, and
    // max_abs (over its finite elements) is not its error: the ratio is undefined.
    const std::optional<double> nan = read_number(member(b, "nan_mismatch")),
                                inf = read_number(member(b, "inf_mismatch"));
    if (r.baseline_max_abs && ((nan && *nan > 0) || (inf && *inf > 0)))
      r.baseline_max_abs = std::numeric_limits<double>::quiet_NaN();
  }
  if (const json::Value* b = json::find(t, "rigorous_bound")) {
    r.error_over_bound = read_number(member(b, "max_error_over_bound"));
    r.unbounded = read_number(member(b, "unbounded")).value_or(0);
    r.vacuous = read_number(member(b, "vacuous")).value_or(0);
    const std::optional<double> compared = read_number(member(errors, "count"));
    if (r.unbounded > 0 && compared && r.unbounded >= *compared) r.error_over_bound.reset();
  }
  return r;
}

}  // namespace

bool FuzzRecord::judged(const TensorResult& t) const {
  return (status == CaseStatus::pass || status == CaseStatus::fail || status == CaseStatus::not_judged ||
          status == CaseStatus::pass_baseline_rule || status == CaseStatus::fail_baseline_rule) &&
         t.verdict != Verdict::out_of_domain;
}

bool FuzzRecord::non_finite_failure(const TensorResult& t) const {
  return judged(t) && t.verdict == Verdict::fail && (t.nan_mismatch > 0 || t.inf_mismatch > 0);
}

bool FuzzRecord::non_finite_failure() const {
  for (const TensorResult& t : tensors)
    if (non_finite_failure(t)) return true;
  return false;
}

FuzzRecord fuzz_record_from_json(const json::Value& line) {
  if (read_string(json::find(line, "format")) != "flashproof-fuzz-record")
    throw std::invalid_argument("not a fuzz record (no \"format\": \"flashproof-fuzz-record\")");
  if (read_integer(json::find(line, "version")) != 1)
    throw std::invalid_argument("unsupported fuzz record version (this report reads version 1)");
  // A JSON integer: neither 1.0 nor "1".
  const json::Value* index_value = json::find(line, "index");
  const std::optional<std::int64_t> index = index_value != nullptr ? json::integer(*index_value) : std::nullopt;
  if (!index || *index < 0) throw std::invalid_argument("\"index\" must be an integer >= 0");

  FuzzRecord r;
  r.index = *index;
  r.impl = read_string(json::find(line, "impl"));
  const std::string status = read_string(json::find(line, "status"));
  if (r.impl.empty()) throw std::invalid_argument("missing \"impl\"");
  const std::optional<CaseStatus> known = parse_case_status(status);
  if (!known) throw std::invalid_argument("unknown status " + shown(status));
  r.status = *known;
  r.campaign_seed = scalar_text(json::find(line, "campaign_seed"));
  r.where = read_string(json::find(line, "where"));
  r.kind = read_string(json::find(line, "kind"), "?");
  r.logit_scale = read_number(json::find(line, "logit_scale"));
  r.error = read_string(json::find(line, "error"));
  r.failure_file = read_string(json::find(line, "failure_file"));
  r.replay = read_string(json::find(line, "replay"));

  // The shape and dtype: from the case file object, else from the check record's own case.
  const json::Value* record = json::find(line, "record");
  if (const json::Value* c = json::find(line, "case"); c != nullptr && c->is_object()) r.case_file = *c;
  const json::Value* shape = r.case_file.is_object() ? &r.case_file : member(record, "case");
  r.dtype = read_string(member(shape, "dtype"), "?");
  // The case's seed: a decimal string (case files) or a number (check records).
  r.case_seed = scalar_text(member(shape, "seed"));
  r.seqlen_k = read_integer(member(shape, "seqlen_k")).value_or(-1);
  r.head_dim = read_integer(member(shape, "head_dim")).value_or(-1);

  if (record != nullptr && record->is_object()) {
    if (const json::Value* d = json::find(*record, "in_domain"); d != nullptr && d->is_boolean())
      r.in_domain = d->get<bool>();
    if (const json::Value* tensors = json::find(*record, "tensors"); tensors != nullptr && tensors->is_array())
      for (const json::Value& t : *tensors) r.tensors.push_back(tensor_from_json(t));
  } else if (r.status != CaseStatus::crash) {
    throw std::invalid_argument("status " + status + " without a check record");
  }
  return r;
}

}  // namespace flashproof::report
