#include "report/campaign_statistics.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

namespace flashproof::report {
namespace {

// Rank of name in a preferred order; names not in it come after, by name.
template <std::size_t N>
bool preferred_before(const std::array<std::string_view, N>& order, const std::string& a,
                      const std::string& b) {
  const auto ra = std::find(order.begin(), order.end(), a) - order.begin();
  const auto rb = std::find(order.begin(), order.end(), b) - order.begin();
  return ra != rb ? ra < rb : a < b;
}

// The per-case values are kept until every record is in, then summarized.
struct TensorAccumulator {
  TensorStats stats;
  std::vector<double> ulps, rel;

  void add(const FuzzRecord& r, const TensorResult& t) {
    ++stats.cases;
    if (t.verdict == Verdict::pass) ++stats.pass;
    if (t.verdict == Verdict::fail) ++stats.fail;
    if (t.verdict == Verdict::out_of_domain) ++stats.out_of_domain;
    if (t.verdict == Verdict::not_judged) ++stats.not_judged;
    if (t.verdict == Verdict::pass_baseline_rule) ++stats.pass_baseline_rule;
    if (t.verdict == Verdict::fail_baseline_rule) ++stats.fail_baseline_rule;
    if (t.regression) ++stats.regression;
    if (!r.judged(t)) return;
    if (t.max_ulps) ulps.push_back(*t.max_ulps);
    if (t.max_rel) rel.push_back(*t.max_rel);
    if (t.error_over_bound) stats.error_over_bound.add(*t.error_over_bound);
    if (t.unbounded > 0) ++stats.unbounded;
    if (t.vacuous > 0) ++stats.vacuous;
    if (r.non_finite_failure(t)) ++stats.non_finite_fail;
    if (t.max_abs && t.baseline_max_abs) stats.baseline_ratio.add(*t.max_abs, *t.baseline_max_abs);
    if (t.max_abs && t.regression_tolerance)
      stats.regression_margin.add(*t.max_abs, *t.regression_tolerance);
  }
};

struct ImplAccumulator {
  ImplStats stats;
  std::map<std::string, TensorAccumulator> tensors;

  void add(const FuzzRecord& r) {
    ++stats.cases;
    if (r.status == CaseStatus::pass) ++stats.pass;
    if (r.status == CaseStatus::fail) ++stats.fail;
    if (r.status == CaseStatus::out_of_domain) ++stats.out_of_domain;
    if (r.status == CaseStatus::not_judged) ++stats.not_judged;
    if (r.status == CaseStatus::pass_baseline_rule) ++stats.pass_baseline_rule;
    if (r.status == CaseStatus::fail_baseline_rule) ++stats.fail_baseline_rule;
    if (r.status == CaseStatus::crash) ++stats.crash;
    if (!r.in_domain) ++stats.not_in_domain;
    if (r.status == CaseStatus::fail && r.non_finite_failure()) ++stats.non_finite_fail;
    for (const TensorResult& t : r.tensors) tensors[t.name].add(r, t);
  }

  ImplStats finish(const std::string& impl) {
    stats.impl = impl;
    for (auto& [name, acc] : tensors) {
      acc.stats.name = name;
      acc.stats.ulps = distribution_of(std::move(acc.ulps));
      acc.stats.rel = distribution_of(std::move(acc.rel));
      stats.tensors.push_back(std::move(acc.stats));
    }
    std::sort(stats.tensors.begin(), stats.tensors.end(),
              [](const auto& a, const auto& b) { return tensor_before(a.name, b.name); });
    return std::move(stats);
  }
};

}  // namespace

bool dtype_before(const std::string& a, const std::string& b) {
  return preferred_before(std::array<std::string_view, 3>{"fp16", "bf16", "fp32"}, a, b);
}

bool impl_before(const std::string& a, const std::string& b) {
  return preferred_before(std::array<std::string_view, 1>{"naive"}, a, b);
}

bool tensor_before(const std::string& a, const std::string& b) {
  return preferred_before(std::array<std::string_view, 5>{"O", "LSE", "dQ", "dK", "dV"}, a, b);
}

std::vector<DtypeStats> campaign_statistics(const std::vector<FuzzRecord>& records) {
  std::map<std::string, std::map<std::string, ImplAccumulator>> by_dtype;
  for (const FuzzRecord& r : records) by_dtype[r.dtype][r.impl].add(r);

  std::vector<DtypeStats> dtypes;
  for (auto& [dtype, impls] : by_dtype) {
    DtypeStats& d = dtypes.emplace_back();
    d.dtype = dtype;
    for (auto& [impl, acc] : impls) {
      d.impls.push_back(acc.finish(impl));
      d.records += d.impls.back().cases;
    }
    std::sort(d.impls.begin(), d.impls.end(),
              [](const auto& a, const auto& b) { return impl_before(a.impl, b.impl); });
  }
  std::sort(dtypes.begin(), dtypes.end(),
            [](const auto& a, const auto& b) { return dtype_before(a.dtype, b.dtype); });
  return dtypes;
}

}  // namespace flashproof::report
