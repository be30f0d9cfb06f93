#include "report/report_plots.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "report/campaign_statistics.h"
#include "report/distribution.h"
#include "report/svg_plot.h"

namespace flashproof::report {
namespace {

// The tensors a scatter plot shows: O alone, or the largest error over the backward gradients.
struct TensorGroup {
  std::string title;
  std::vector<std::string> tensors;
};

// Over the judged tensors of r named in names: the largest value of field (NaN the largest).
std::optional<double> largest(const FuzzRecord& r, const std::vector<std::string>& names,
                              std::optional<double> TensorResult::*field) {
  std::optional<double> worst;
  for (const TensorResult& t : r.tensors) {
    if (!r.judged(t) || !(t.*field) || std::find(names.begin(), names.end(), t.name) == names.end())
      continue;
    if (!worst || less_with_nan_greatest(*worst, *(t.*field))) worst = t.*field;
  }
  return worst;
}

struct XVariable {
  std::string name, label;
  bool log;
  std::function<std::optional<double>(const FuzzRecord&)> value;
};

const std::vector<XVariable>& x_variables() {
  static const std::vector<XVariable> variables = {
      {"seqlen_k", "seqlen_k (log scale)", true,
       [](const FuzzRecord& r) -> std::optional<double> {
         if (r.seqlen_k < 0) return std::nullopt;
         return static_cast<double>(r.seqlen_k);
       }},
      {"head_dim", "head_dim", false,
       [](const FuzzRecord& r) -> std::optional<double> {
         if (r.head_dim < 0) return std::nullopt;
         return static_cast<double>(r.head_dim);
       }},
      {"logit_scale", "logit_scale: largest |scaled logit| (log scale)", true,
       [](const FuzzRecord& r) { return r.logit_scale; }},
  };
  return variables;
}

// One series per implementation of the dtype, in report order, styled by report position.
std::vector<PlotSeries> empty_series(const Report& report, const DtypeReport& d) {
  std::vector<PlotSeries> series;
  const std::vector<std::string> impls = report_impls(report);
  for (std::size_t k = 0; k < impls.size(); ++k)
    for (const ImplStats& s : d.stats.impls)
      if (s.impl == impls[k]) series.push_back({impls[k], k, {}, {}});
  return series;
}

PlotSeries& series_of(std::vector<PlotSeries>& series, const std::string& impl) {
  return *std::find_if(series.begin(), series.end(),
                       [&](const PlotSeries& p) { return p.name == impl; });
}

Figure error_figure(const Report& report, const DtypeReport& d, const TensorGroup& group,
                    const XVariable& x) {
  ScatterPlot plot;
  plot.title = d.stats.dtype + " " + group.title + ": error vs " + x.name;
  plot.x_label = x.label;
  plot.y_label = "largest error (ULPs, log scale)";
  plot.x_log = x.log;
  plot.y_log = true;
  plot.series = empty_series(report, d);
  std::size_t points = 0;
  for (const FuzzRecord& r : report.merged.records) {
    if (r.dtype != d.stats.dtype) continue;
    const auto xv = x.value(r);
    const auto yv = largest(r, group.tensors, &TensorResult::max_ulps);
    if (!xv || !yv) continue;
    series_of(plot.series, r.impl).points.emplace_back(*xv, *yv);
    ++points;
  }
  const std::string what = group.tensors.size() == 1
                               ? "of " + group.title + " (in its ULPs)"
                               : "over " + group.title + " (each in its ULPs)";
  return {scatter_svg(plot), "One marker per case: its largest element error " + what +
                                 " against its " + x.name + "; " + std::to_string(points) +
                                 " judged cases. Errors of 0 sit on the row \"0\", inf and nan "
                                 "on the row \"inf\"."};
}

Figure bound_figure(const Report& report, const DtypeReport& d) {
  BarChart chart;
  chart.title = d.stats.dtype + ": error / rigorous bound";
  chart.x_label = "cases";
  chart.y_label = "error / bound";
  for (std::size_t b = 0; b < kBoundBuckets; ++b) chart.categories.push_back(bound_bucket_label(b));
  chart.series = empty_series(report, d);
  for (PlotSeries& p : chart.series) p.bars.assign(kBoundBuckets, 0);
  std::vector<std::string> every_tensor;
  for (const ImplStats& s : d.stats.impls)
    for (const TensorStats& t : s.tensors) every_tensor.push_back(t.name);
  for (const FuzzRecord& r : report.merged.records) {
    if (r.dtype != d.stats.dtype) continue;
    if (const auto ratio = largest(r, every_tensor, &TensorResult::error_over_bound))
      ++series_of(chart.series, r.impl).bars[bound_bucket(*ratio)];
  }
  std::size_t non_finite = 0;
  for (const ImplStats& s : d.stats.impls) non_finite += s.non_finite_fail;
  std::string caption =
      "Judged cases per bucket of their largest error / bound over all tensors (over the values "
      "returned finite). A bar in \">= 1\" is an error that reached its proven bound.";
  if (non_finite > 0)
    caption += " " + std::to_string(non_finite) + (non_finite == 1 ? " case" : " cases") +
               " failed with NaN or inf where the exact value is finite, which these bars do not show "
               "(the tables' \"non-finite fail\" column).";
  return {bar_chart_svg(chart), caption};
}

}  // namespace

std::vector<std::string> report_impls(const Report& report) {
  std::vector<std::string> impls;
  for (const DtypeReport& d : report.dtypes)
    for (const ImplStats& s : d.stats.impls)
      if (std::find(impls.begin(), impls.end(), s.impl) == impls.end()) impls.push_back(s.impl);
  std::sort(impls.begin(), impls.end(), impl_before);
  return impls;
}

std::vector<Figure> dtype_figures(const Report& report, const DtypeReport& d) {
  std::vector<TensorGroup> groups = {{"O", {"O"}}};
  const std::vector<std::string> gradients = {"dQ", "dK", "dV"};
  const bool backward = std::any_of(
      report.merged.records.begin(), report.merged.records.end(), [&](const FuzzRecord& r) {
        return r.dtype == d.stats.dtype && largest(r, gradients, &TensorResult::max_ulps);
      });
  if (backward) groups.push_back({"dQ, dK, dV", gradients});
  std::vector<Figure> figures;
  for (const TensorGroup& g : groups)
    for (const XVariable& x : x_variables()) figures.push_back(error_figure(report, d, g, x));
  figures.push_back(bound_figure(report, d));
  return figures;
}

}  // namespace flashproof::report
