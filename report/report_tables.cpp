#include "report/report_tables.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "report/display_text.h"
#include "report/json_values.h"

namespace flashproof::report {
namespace {

std::string count_text(std::size_t n) { return std::to_string(n); }

Table table(std::vector<std::string> header, std::vector<Column> columns) {
  Table t;
  t.header = std::move(header);
  t.columns = std::move(columns);
  return t;
}

// Elements returned NaN or inf where the exact value is not: "4 NaN", "2 inf", "4 NaN, 2 inf";
// "0" when none.
std::string non_finite_text(double nan, double inf) {
  std::string s;
  if (nan > 0) s = number_text(nan) + " NaN";
  if (inf > 0) s += (s.empty() ? "" : ", ") + number_text(inf) + " inf";
  return s.empty() ? "0" : s;
}

// What a failure or crash amounts to in one cell: the failed tensors (with their NaN and inf
// elements where they failed with some), or what the crash said.
std::string failure_what(const FuzzRecord& r) {
  if (r.status == CaseStatus::crash) return r.error.empty() ? "crash" : r.error;
  std::string failed;
  for (const TensorResult& t : r.tensors)
    if (t.verdict == Verdict::fail) {
      failed += (failed.empty() ? "" : ", ") + t.name;
      if (r.non_finite_failure(t)) failed += " (" + non_finite_text(t.nan_mismatch, t.inf_mismatch) + ")";
    }
  return failed.empty() ? r.error : failed + " failed";
}

// campaign.json's shard as "i/n"; "-" when unknown.
std::string shard_text(const json::Value& campaign) {
  const json::Value* shard = campaign_parameter(campaign, "shard");
  const json::Value* index = member(shard, "index");
  const json::Value* of = member(shard, "count");
  if (index == nullptr || of == nullptr) return "-";
  return std::to_string(read_integer(index).value_or(0)) + "/" + std::to_string(read_integer(of).value_or(0));
}

}  // namespace

std::string case_label(const Report& report, const FuzzRecord& r) {
  std::string label = "case " + std::to_string(r.index);
  if (report.several_campaigns)
    label += " (seed " + (r.campaign_seed.empty() ? "?" : r.campaign_seed) + ")";
  return label;
}

Table inputs_table(const Report& report) {
  Table t = table({"campaign directory", "seed", "shard", "records", "skipped lines", "duplicates", "ended",
                   "unsupported", "fitted"},
                  {Column::code, Column::text, Column::text, Column::number, Column::alert_count,
                   Column::number, Column::text, Column::alert_count, Column::number});
  for (const CampaignInput& in : report.merged.inputs) {
    const json::Value* seed = campaign_parameter(in.campaign, "seed");
    // When the campaign ended by itself (ended.json), else "no": killed or still running ("-"
    // without a campaign.json, which says nothing either way).
    const std::string ended = !in.ended.is_null()      ? read_string(json::find(in.ended, "ended"), "yes")
                              : !in.campaign.is_null() ? "no"
                                                       : "-";
    // From ended.json (fuzz/end_marker.h), "-" where it does not say (absent, or older).
    const auto counted_in_end = [&](const char* key) {
      const std::optional<std::uint64_t> n = ended_count(in, key);
      return n ? count_text(*n) : std::string("-");
    };
    t.rows.push_back({in.dir, seed != nullptr ? scalar_text(seed) : "-", shard_text(in.campaign),
                      count_text(in.records), count_text(in.skipped_lines), count_text(in.duplicates), ended,
                      counted_in_end("unsupported"), counted_in_end("fitted")});
  }
  return t;
}

Table judged_table(const Report& report) {
  Table t = table({"records or tensors", "total", "judged", "judged %", "baseline rule", "not judged",
                   "out-of-domain", "crash"},
                  {Column::text, Column::number, Column::number, Column::number, Column::number, Column::alert_count,
                   Column::number, Column::alert_count});
  const auto row = [&](const std::string& label, const JudgedCount& c) {
    const double pct = c.total ? 100.0 * static_cast<double>(c.judged) / static_cast<double>(c.total) : 0.0;
    char p[32];
    std::snprintf(p, sizeof p, "%.0f%%", std::floor(pct));
    t.rows.push_back({label, count_text(c.total), count_text(c.judged), c.total ? p : "-", count_text(c.baseline_rule),
                      count_text(c.not_judged), count_text(c.out_of_domain), count_text(c.crash)});
  };
  for (const JudgedCount& c : report.judged.by_class) row("records, |scale q.k| " + c.label, c);
  row("records, all", report.judged.all);
  for (const JudgedCount& c : report.judged.by_tensor) row("tensor " + c.label, c);
  return t;
}

Table status_table(const DtypeReport& d) {
  Table t = table({"implementation", "cases", "pass", "fail", "non-finite fail", "out-of-domain", "not judged",
                   "pass (baseline rule)", "fail (baseline rule)", "crash", "not in domain"},
                  {Column::text, Column::number, Column::number, Column::alert_count, Column::alert_count,
                   Column::number, Column::alert_count, Column::number, Column::alert_count, Column::alert_count,
                   Column::number});
  for (const ImplStats& s : d.stats.impls)
    t.rows.push_back({s.impl, count_text(s.cases), count_text(s.pass), count_text(s.fail),
                      count_text(s.non_finite_fail), count_text(s.out_of_domain), count_text(s.not_judged),
                      count_text(s.pass_baseline_rule), count_text(s.fail_baseline_rule), count_text(s.crash),
                      count_text(s.not_in_domain)});
  return t;
}

namespace {
// The attention features a record's case uses (docs/spec.md): "packed" for a packed batch, else
// "dense"; and "soft cap", "ALiBi" where set. A case counts in the row of each feature it uses. A
// case file's problem says which (report/ reads JSON only, not core's Problem).
constexpr const char* kFeatures[] = {"dense", "packed", "soft cap", "ALiBi"};
bool uses(const FuzzRecord& r, std::string_view feature) {
  if (feature == "soft cap") return member(&r.case_file, "softcap") != nullptr;
  if (feature == "ALiBi") return member(&r.case_file, "alibi_slopes") != nullptr;
  return (member(&r.case_file, "cu_seqlens_q") != nullptr) == (feature == "packed");
}
}  // namespace

Table feature_table(const Report& report, const DtypeReport& d) {
  Table t = table({"implementation", "feature", "cases", "pass", "fail", "out-of-domain", "not judged", "crash",
                   "pass (baseline rule)", "fail (baseline rule)"},
                  {Column::text, Column::text, Column::number, Column::number, Column::alert_count, Column::number,
                   Column::alert_count, Column::alert_count, Column::number, Column::alert_count});
  for (const ImplStats& s : d.stats.impls)
    for (const char* feature : kFeatures) {
      std::size_t n[8] = {};
      for (const FuzzRecord& r : report.merged.records) {
        if (r.dtype != d.stats.dtype || r.impl != s.impl || !uses(r, feature)) continue;
        ++n[0];
        ++n[r.status == CaseStatus::pass           ? 1
            : r.status == CaseStatus::fail         ? 2
            : r.status == CaseStatus::out_of_domain ? 3
            : r.status == CaseStatus::not_judged   ? 4
            : r.status == CaseStatus::crash        ? 5
            : r.status == CaseStatus::pass_baseline_rule ? 6
                                                   : 7];
      }
      if (n[0] > 0)
        t.rows.push_back({s.impl, feature, count_text(n[0]), count_text(n[1]), count_text(n[2]), count_text(n[3]),
                          count_text(n[4]), count_text(n[5]), count_text(n[6]), count_text(n[7])});
    }
  return t;
}

bool has_features(const Report& report, const DtypeReport& d) {
  for (const FuzzRecord& r : report.merged.records)
    if (r.dtype == d.stats.dtype && (!uses(r, "dense") || uses(r, "soft cap") || uses(r, "ALiBi"))) return true;
  return false;
}

Table error_table(const DtypeReport& d) {
  Table t = table({"implementation", "tensor", "cases", "pass", "fail", "out-of-domain", "not judged", "rule 3",
                   "max", "p50", "p99", "max", "p50", "p99", "median", "max", "max"},
                  {Column::text, Column::text, Column::number, Column::number, Column::alert_count,
                   Column::number, Column::alert_count, Column::number, Column::number, Column::number, Column::number,
                   Column::number, Column::number, Column::number, Column::number, Column::number,
                   Column::number});
  t.groups = {{"", 3},
              {"verdicts", 5},
              {"error in ULPs", 3},
              {"relative error", 3},
              {"error / naive's error", 2},
              {"error / rule 3 tolerance", 1}};
  for (const ImplStats& s : d.stats.impls)
    for (const TensorStats& x : s.tensors) {
      const Distribution ratio = x.baseline_ratio.summary();
      t.rows.push_back({s.impl, x.name, count_text(x.cases), count_text(x.pass), count_text(x.fail),
                        count_text(x.out_of_domain), count_text(x.not_judged), count_text(x.regression), number_text(x.ulps.max),
                        number_text(x.ulps.p50),
                        number_text(x.ulps.p99), number_text(x.rel.max), number_text(x.rel.p50),
                        number_text(x.rel.p99), number_text(ratio.p50), number_text(ratio.max),
                        number_text(x.regression_margin.summary().max)});
    }
  return t;
}

Table bound_table(const DtypeReport& d) {
  Table t;
  t.header = {"implementation", "tensor", "cases"};
  t.columns = {Column::text, Column::text, Column::number};
  for (std::size_t b = 0; b < kBoundBuckets; ++b) {
    t.header.push_back(bound_bucket_label(b));
    t.columns.push_back(b + 1 == kBoundBuckets ? Column::alert_count : Column::number);
  }
  t.header.push_back("max");
  t.columns.push_back(Column::number);
  t.header.push_back("non-finite fail");
  t.columns.push_back(Column::alert_count);
  t.header.push_back("no finite bound");
  t.columns.push_back(Column::number);
  t.header.push_back("bound >= size");
  t.columns.push_back(Column::number);
  t.groups = {{"", 3}, {"cases with error / bound in", kBoundBuckets}, {"", 4}};
  for (const ImplStats& s : d.stats.impls)
    for (const TensorStats& x : s.tensors) {
      std::vector<std::string> row = {s.impl, x.name, count_text(x.error_over_bound.count)};
      for (std::size_t b = 0; b < kBoundBuckets; ++b)
        row.push_back(count_text(x.error_over_bound.counts[b]));
      row.push_back(number_text(x.error_over_bound.max));
      row.push_back(count_text(x.non_finite_fail));
      row.push_back(count_text(x.unbounded));
      row.push_back(count_text(x.vacuous));
      t.rows.push_back(std::move(row));
    }
  return t;
}

Table worst_table(const Report& report, const DtypeReport& d) {
  Table t = table({"#", "implementation", "case", "kind", "status", "tensor", "error / bound",
                   "non-finite", "ULPs", "replay"},
                  {Column::number, Column::text, Column::text, Column::text, Column::status,
                   Column::text, Column::number, Column::alert_count, Column::number, Column::code});
  std::size_t rank = 0;
  for (const ListedWorstCase& w : d.worst) {
    const FuzzRecord& r = report.merged.records[w.worst.record];
    t.rows.push_back({count_text(++rank), r.impl, case_label(report, r), r.kind, case_status_name(r.status),
                      w.worst.tensor, number_text(w.worst.error_over_bound),
                      non_finite_text(w.worst.nan_mismatch, w.worst.inf_mismatch), number_text(w.worst.max_ulps),
                      w.replay.empty() ? "(no case in the record)" : w.replay});
  }
  return t;
}

Table failure_table(const Report& report, const DtypeReport& d, std::size_t limit) {
  Table t = table(
      {"implementation", "case", "kind", "status", "what", "replay"},
      {Column::text, Column::text, Column::text, Column::status, Column::prose, Column::code});
  for (std::size_t i = 0; i < d.failures.size() && i < limit; ++i) {
    const FuzzRecord& r = report.merged.records[d.failures[i]];
    t.rows.push_back({r.impl, case_label(report, r), r.kind, case_status_name(r.status), failure_what(r),
                      r.replay.empty() ? "-" : r.replay});
  }
  return t;
}

}  // namespace flashproof::report
