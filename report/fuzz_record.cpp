#include "report/fuzz_record.h"

#include <limits>
#include <stdexcept>

#include "report/json_values.h"

namespace flashproof::report {
namespace {

TensorResult tensor_from_json(const Json& t) {
  TensorResult r;
  r.name = read_string(t.find("name"), "?");
  r.verdict = read_string(t.find("verdict"), "?");
  const Json* regression = t.find("regression");
  r.regression = regression != nullptr && regression->type == Json::Type::boolean && regression->boolean;
  if (const Json* e = t.find("errors")) {
    r.max_ulps = read_number(e->find("max_ulps"));
    // Where the reference settled no element's rounding, max_ulps (0) measures nothing.
    const std::optional<double> unknown = read_number(e->find("ulps_unknown")), count = read_number(e->find("count"));
    if (unknown && count && *unknown > 0 && *unknown >= *count) r.max_ulps.reset();
    r.max_rel = read_number(e->find("max_rel"));
    r.max_abs = read_number(e->find("max_abs"));
  }
  const Json* applies = t.find("regression_applies");
  if (applies == nullptr || applies->type != Json::Type::boolean || applies->boolean)
    r.regression_tolerance = read_number(t.find("tolerance"));
  if (const Json* b = t.find("baseline_errors")) {
    r.baseline_max_abs = read_number(b->find("max_abs"));
    // Where the baseline is NaN or inf against a finite exact value its error is unbounded, and
    // max_abs (over its finite elements) is not its error: the ratio is undefined.
    const std::optional<double> nan = read_number(b->find("nan_mismatch")), inf = read_number(b->find("inf_mismatch"));
    if (r.baseline_max_abs && ((nan && *nan > 0) || (inf && *inf > 0)))
      r.baseline_max_abs = std::numeric_limits<double>::quiet_NaN();
  }
  if (const Json* b = t.find("rigorous_bound")) {
    r.error_over_bound = read_number(b->find("max_error_over_bound"));
    r.unbounded = read_number(b->find("unbounded")).value_or(0);
    const std::optional<double> compared =
        t.find("errors") ? read_number(t.find("errors")->find("count")) : std::nullopt;
    if (r.unbounded > 0 && compared && r.unbounded >= *compared) r.error_over_bound.reset();
  }
  return r;
}

// A case member as text: a decimal string (case files) or a number (check records).
std::string text_of(const Json* v) {
  return v != nullptr && (v->type == Json::Type::string || v->type == Json::Type::number) ? v->text
                                                                                          : "";
}

}  // namespace

bool FuzzRecord::judged(const TensorResult& t) const {
  return (status == "pass" || status == "fail" || status == "not-judged") && t.verdict != "out-of-domain";
}

FuzzRecord fuzz_record_from_json(const Json& line) {
  if (read_string(line.find("format")) != "flashproof-fuzz-record")
    throw std::invalid_argument("not a fuzz record (no \"format\": \"flashproof-fuzz-record\")");
  if (const Json* v = line.find("version"); v == nullptr || v->integer(-1) != 1)
    throw std::invalid_argument("unsupported fuzz record version (this report reads version 1)");
  const Json* index = line.find("index");
  if (index == nullptr || index->type != Json::Type::number || index->integer(-1) < 0)
    throw std::invalid_argument("\"index\" must be an integer >= 0");

  FuzzRecord r;
  r.index = index->integer();
  r.impl = read_string(line.find("impl"));
  r.status = read_string(line.find("status"));
  if (r.impl.empty()) throw std::invalid_argument("missing \"impl\"");
  if (r.status != "pass" && r.status != "fail" && r.status != "out-of-domain" &&
      r.status != "not-judged" && r.status != "crash")
    throw std::invalid_argument("unknown status " + shown(r.status));
  r.campaign_seed = text_of(line.find("campaign_seed"));
  r.where = read_string(line.find("where"));
  r.kind = read_string(line.find("kind"), "?");
  r.logit_scale = read_number(line.find("logit_scale"));
  r.error = read_string(line.find("error"));
  r.failure_file = read_string(line.find("failure_file"));
  r.replay = read_string(line.find("replay"));

  // The shape and dtype: from the case file object, else from the check record's own case.
  const Json* record = line.find("record");
  const Json* record_case = record != nullptr ? record->find("case") : nullptr;
  if (const Json* c = line.find("case"); c != nullptr && c->type == Json::Type::object)
    r.case_file = *c;
  const Json* shape = r.case_file.type == Json::Type::object ? &r.case_file : record_case;
  r.dtype = read_string(shape != nullptr ? shape->find("dtype") : nullptr, "?");
  if (shape != nullptr) {
    r.case_seed = text_of(shape->find("seed"));
    if (const Json* v = shape->find("seqlen_k")) r.seqlen_k = v->integer(-1);
    if (const Json* v = shape->find("head_dim")) r.head_dim = v->integer(-1);
  }

  if (record != nullptr && record->type == Json::Type::object) {
    if (const Json* d = record->find("in_domain"); d != nullptr && d->type == Json::Type::boolean)
      r.in_domain = d->boolean;
    if (const Json* tensors = record->find("tensors"))
      for (const Json& t : tensors->items) r.tensors.push_back(tensor_from_json(t));
  } else if (r.status != "crash") {
    throw std::invalid_argument("status " + r.status + " without a check record");
  }
  return r;
}

}  // namespace flashproof::report
