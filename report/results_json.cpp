#include "report/results_json.h"

#include "report/json_values.h"

namespace flashproof::report {
namespace {

// A count as a JSON integer.
template <class N>
Json count(N n) {
  return json_integer(static_cast<long long>(n));
}

// The pass / fail / out-of-domain / not-judged counts every level of results.json carries.
Json& add_verdicts(Json& j, const char* key, std::size_t pass, std::size_t fail, std::size_t out_of_domain,
                   std::size_t not_judged) {
  Json& v = add(j, key, json_object());
  add(v, "pass", count(pass));
  add(v, "fail", count(fail));
  add(v, "out-of-domain", count(out_of_domain));
  add(v, "not-judged", count(not_judged));
  return v;
}

Json distribution_json(const Distribution& d) {
  Json j = json_object();
  add(j, "cases", count(d.count));
  add(j, "max", json_number(d.max));
  add(j, "p50", json_number(d.p50));
  add(j, "p99", json_number(d.p99));
  return j;
}

Json histogram_json(const BoundHistogram& h) {
  Json j = json_object();
  add(j, "cases", count(h.count));
  add(j, "max", json_number(h.max));
  Json& buckets = add(j, "buckets", json_array());
  for (std::size_t b = 0; b < kBoundBuckets; ++b) {
    Json& bucket = push(buckets, json_object());
    add(bucket, "from", json_number(bound_bucket_from(b)));
    add(bucket, "to", json_number(bound_bucket_to(b)));
    add(bucket, "cases", count(h.counts[b]));
  }
  return j;
}

Json ratio_json(const CaseRatio& r) {
  const Distribution d = r.summary();
  Json j = json_object();
  add(j, "cases", count(d.count));
  add(j, "skipped", count(r.skipped));
  add(j, "median", json_number(d.p50));
  add(j, "max", json_number(d.max));
  return j;
}

Json tensor_json(const TensorStats& t) {
  Json j = json_object();
  add(j, "name", json_string(t.name));
  add(j, "cases", count(t.cases));
  add_verdicts(j, "verdicts", t.pass, t.fail, t.out_of_domain, t.not_judged);
  add(j, "regression", count(t.regression));
  add(j, "max_ulps", distribution_json(t.ulps));
  add(j, "max_rel", distribution_json(t.rel));
  add(j, "error_over_bound", histogram_json(t.error_over_bound));
  add(j, "unbounded", count(t.unbounded));
  add(j, "baseline_ratio", ratio_json(t.baseline_ratio));
  add(j, "regression_margin", ratio_json(t.regression_margin));
  return j;
}

Json impl_json(const ImplStats& s) {
  Json j = json_object();
  add(j, "impl", json_string(s.impl));
  add(j, "cases", count(s.cases));
  add(add_verdicts(j, "status", s.pass, s.fail, s.out_of_domain, s.not_judged), "crash", count(s.crash));
  add(j, "not_in_domain", count(s.not_in_domain));
  Json& tensors = add(j, "tensors", json_array());
  for (const TensorStats& t : s.tensors) push(tensors, tensor_json(t));
  return j;
}

// What identifies a record in the listings: where it came from and which case it is.
Json record_identity(const FuzzRecord& r) {
  Json j = json_object();
  add(j, "impl", json_string(r.impl));
  add(j, "campaign_seed", json_string(r.campaign_seed));
  add(j, "index", json_integer(r.index));
  add(j, "status", json_string(r.status));
  add(j, "kind", json_string(r.kind));
  add(j, "source", json_string(r.source));
  return j;
}

Json worst_json(const ListedWorstCase& w, const FuzzRecord& r) {
  Json j = record_identity(r);
  add(j, "tensor", json_string(w.worst.tensor));
  add(j, "error_over_bound", json_number(w.worst.error_over_bound));
  add(j, "max_ulps", json_number(w.worst.max_ulps));
  add(j, "case_file", json_string(w.case_file));
  add(j, "replay", json_string(w.replay));
  return j;
}

Json failure_json(const FuzzRecord& r) {
  Json j = record_identity(r);
  Json& failed = add(j, "failed_tensors", json_array());
  for (const TensorResult& t : r.tensors)
    if (t.verdict == "fail") push(failed, json_string(t.name));
  add(j, "error", json_string(r.error));
  add(j, "failure_file", json_string(r.failure_file));
  add(j, "replay", json_string(r.replay));
  return j;
}

Json inputs_json(const MergedCampaigns& merged) {
  Json inputs = json_array();
  for (const CampaignInput& in : merged.inputs) {
    Json& j = push(inputs, json_object());
    add(j, "dir", json_string(in.dir));
    add(j, "campaign", in.campaign);
    add(j, "ended", in.ended);
    add(j, "records", count(in.records));
    add(j, "skipped_lines", count(in.skipped_lines));
    add(j, "duplicates", count(in.duplicates));
  }
  return inputs;
}

}  // namespace

Json results_json(const Report& report) {
  const MergedCampaigns& merged = report.merged;
  Json j = json_object();
  add(j, "format", json_string("flashproof-report"));
  add(j, "version", json_integer(1));
  add(j, "inputs", inputs_json(merged));
  add(j, "records", count(merged.records.size()));
  add(j, "skipped_lines", count(merged.skipped_lines()));
  add(j, "duplicates", count(merged.duplicates()));
  Json& warnings = add(j, "warnings", json_array());
  for (const std::string& w : merged.warnings) push(warnings, json_string(w));
  Json& dtypes = add(j, "dtypes", json_array());
  for (const DtypeReport& d : report.dtypes) {
    Json& dj = push(dtypes, json_object());
    add(dj, "dtype", json_string(d.stats.dtype));
    add(dj, "records", count(d.stats.records));
    Json& impls = add(dj, "impls", json_array());
    for (const ImplStats& s : d.stats.impls) push(impls, impl_json(s));
    Json& worst = add(dj, "worst_cases", json_array());
    for (const ListedWorstCase& w : d.worst)
      push(worst, worst_json(w, merged.records[w.worst.record]));
    Json& failed = add(dj, "failures", json_array());
    for (std::size_t i : d.failures) push(failed, failure_json(merged.records[i]));
  }
  return j;
}

}  // namespace flashproof::report
