#include "report/results_json.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "core/verdict.h"
#include "report/report_text.h"

namespace flashproof::report {
namespace {

// A count as a JSON integer.
template <class N>
json::Value count(N n) {
  return static_cast<std::int64_t>(n);
}

// An optional number: null when absent.
json::Value number(std::optional<double> x) { return x ? json::Value(*x) : json::Value(nullptr); }

// The pass / fail / out-of-domain / not-judged counts every level of results.json carries, under the
// verdicts' record names (core/verdict.h).
template <class Stats>
json::Value verdicts(const Stats& s) {
  json::Value v = json::Value::object();
  v[verdict_name(Verdict::pass)] = count(s.pass);
  v[verdict_name(Verdict::fail)] = count(s.fail);
  v[verdict_name(Verdict::out_of_domain)] = count(s.out_of_domain);
  v[verdict_name(Verdict::not_judged)] = count(s.not_judged);
  v[verdict_name(Verdict::pass_baseline_rule)] = count(s.pass_baseline_rule);
  v[verdict_name(Verdict::fail_baseline_rule)] = count(s.fail_baseline_rule);
  return v;
}

json::Value distribution_json(const Distribution& d) {
  json::Value j = json::Value::object();
  j["cases"] = count(d.count);
  j["max"] = number(d.max);
  j["p50"] = number(d.p50);
  j["p99"] = number(d.p99);
  return j;
}

json::Value histogram_json(const BoundHistogram& h) {
  json::Value j = json::Value::object();
  j["cases"] = count(h.count);
  j["max"] = number(h.max);
  json::Value buckets = json::Value::array();
  for (std::size_t b = 0; b < kBoundBuckets; ++b) {
    json::Value bucket = json::Value::object();
    bucket["from"] = bound_bucket_from(b);
    bucket["to"] = bound_bucket_to(b);
    bucket["cases"] = count(h.counts[b]);
    buckets.push_back(std::move(bucket));
  }
  j["buckets"] = std::move(buckets);
  return j;
}

json::Value ratio_json(const CaseRatio& r) {
  const Distribution d = r.summary();
  json::Value j = json::Value::object();
  j["cases"] = count(d.count);
  j["skipped"] = count(r.skipped);
  j["median"] = number(d.p50);
  j["max"] = number(d.max);
  return j;
}

json::Value tensor_json(const TensorStats& t) {
  json::Value j = json::Value::object();
  j["name"] = t.name;
  j["cases"] = count(t.cases);
  j["verdicts"] = verdicts(t);
  j["regression"] = count(t.regression);
  j["max_ulps"] = distribution_json(t.ulps);
  j["max_rel"] = distribution_json(t.rel);
  j["error_over_bound"] = histogram_json(t.error_over_bound);
  j["unbounded"] = count(t.unbounded);
  j["vacuous"] = count(t.vacuous);
  j["non_finite_fail"] = count(t.non_finite_fail);
  j["baseline_ratio"] = ratio_json(t.baseline_ratio);
  j["regression_margin"] = ratio_json(t.regression_margin);
  return j;
}

json::Value impl_json(const ImplStats& s) {
  json::Value j = json::Value::object();
  j["impl"] = s.impl;
  j["cases"] = count(s.cases);
  j["status"] = verdicts(s);
  j["status"][case_status_name(CaseStatus::crash)] = count(s.crash);
  j["not_in_domain"] = count(s.not_in_domain);
  j["non_finite_fail"] = count(s.non_finite_fail);
  json::Value tensors = json::Value::array();
  for (const TensorStats& t : s.tensors) tensors.push_back(tensor_json(t));
  j["tensors"] = std::move(tensors);
  return j;
}

// What identifies a record in the listings: where it came from and which case it is.
json::Value record_identity(const FuzzRecord& r) {
  json::Value j = json::Value::object();
  j["impl"] = r.impl;
  j["campaign_seed"] = r.campaign_seed;
  j["index"] = count(r.index);
  j["status"] = case_status_name(r.status);
  j["kind"] = r.kind;
  j["source"] = r.source;
  return j;
}

json::Value worst_json(const ListedWorstCase& w, const FuzzRecord& r) {
  json::Value j = record_identity(r);
  j["tensor"] = w.worst.tensor;
  j["error_over_bound"] = w.worst.error_over_bound;
  j["max_ulps"] = number(w.worst.max_ulps);
  j["finite_error_over_bound"] = number(w.worst.finite_error_over_bound);
  j["nan_mismatch"] = count(w.worst.nan_mismatch);
  j["inf_mismatch"] = count(w.worst.inf_mismatch);
  j["case_file"] = w.case_file;
  j["replay"] = w.replay;
  return j;
}

json::Value failure_json(const FuzzRecord& r) {
  json::Value j = record_identity(r);
  json::Value failed = json::Value::array();
  for (const TensorResult& t : r.tensors)
    if (t.verdict == Verdict::fail) failed.push_back(t.name);
  j["failed_tensors"] = std::move(failed);
  json::Value non_finite = json::Value::array();
  for (const TensorResult& t : r.tensors)
    if (r.non_finite_failure(t)) non_finite.push_back(t.name);
  j["non_finite_tensors"] = std::move(non_finite);
  j["error"] = r.error;
  j["failure_file"] = r.failure_file;
  j["replay"] = r.replay;
  return j;
}

json::Value judged_json(const JudgedCount& c) {
  return {{"label", c.label},
          {"total", count(c.total)},
          {"judged", count(c.judged)},
          {"baseline_rule", count(c.baseline_rule)},
          {"not_judged", count(c.not_judged)},
          {"out_of_domain", count(c.out_of_domain)},
          {"crash", count(c.crash)}};
}

json::Value inputs_json(const MergedCampaigns& merged) {
  json::Value inputs = json::Value::array();
  for (const CampaignInput& in : merged.inputs) {
    json::Value j = json::Value::object();
    j["dir"] = in.dir;
    j["campaign"] = in.campaign;
    j["ended"] = in.ended;
    j["records"] = count(in.records);
    j["skipped_lines"] = count(in.skipped_lines);
    j["duplicates"] = count(in.duplicates);
    inputs.push_back(std::move(j));
  }
  return inputs;
}

}  // namespace

json::Value results_json(const Report& report) {
  const MergedCampaigns& merged = report.merged;
  json::Value j = json::Value::object();
  j["format"] = "flashproof-report";
  j["version"] = 1;
  j["inputs"] = inputs_json(merged);
  j["records"] = count(merged.records.size());
  j["skipped_lines"] = count(merged.skipped_lines());
  j["duplicates"] = count(merged.duplicates());
  j["warnings"] = merged.warnings;
  j["summary"] = one_line_summary(report);
  j["non_finite_fail"] = count(non_finite_failures(report));
  json::Value by_class = json::Value::array(), by_tensor = json::Value::array();
  for (const JudgedCount& c : report.judged.by_class) by_class.push_back(judged_json(c));
  for (const JudgedCount& c : report.judged.by_tensor) by_tensor.push_back(judged_json(c));
  j["judged"] = {{"all", judged_json(report.judged.all)}, {"by_logit_class", by_class}, {"by_tensor", by_tensor}};
  const WorstCase* largest = largest_finite_error_over_bound(report);
  j["largest_finite_error_over_bound"] =
      largest != nullptr ? json::Value(largest->error_over_bound) : json::Value(nullptr);
  json::Value dtypes = json::Value::array();
  for (const DtypeReport& d : report.dtypes) {
    json::Value impls = json::Value::array(), worst = json::Value::array(), failed = json::Value::array();
    for (const ImplStats& s : d.stats.impls) impls.push_back(impl_json(s));
    for (const ListedWorstCase& w : d.worst) worst.push_back(worst_json(w, merged.records[w.worst.record]));
    for (std::size_t i : d.failures) failed.push_back(failure_json(merged.records[i]));
    json::Value dj = json::Value::object();
    dj["dtype"] = d.stats.dtype;
    dj["records"] = count(d.stats.records);
    dj["largest_finite_error_over_bound"] =
        d.largest_finite ? json::Value(d.largest_finite->error_over_bound) : json::Value(nullptr);
    dj["impls"] = std::move(impls);
    dj["worst_cases"] = std::move(worst);
    dj["failures"] = std::move(failed);
    dtypes.push_back(std::move(dj));
  }
  j["dtypes"] = std::move(dtypes);
  return j;
}

json::Layout results_layout() {
  json::Layout input = json::indented(json::Digits::shortest);
  input.inner = {{"campaign", json::indented(json::Digits::g17)}, {"ended", json::indented(json::Digits::g17)}};
  json::Layout inputs = json::indented(json::Digits::shortest);
  inputs.inner = {{"*", input}};
  json::Layout layout = json::indented(json::Digits::shortest);
  layout.inner = {{"inputs", inputs}};
  return layout;
}

}  // namespace flashproof::report
