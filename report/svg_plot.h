// Inline SVG plots for index.html: scatter plots (log or linear axes) and grouped bar charts, with
// titles, axis labels, tick labels and a legend. No script, no external resource.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace flashproof::report {

// One implementation's points or bars. style picks the colour and marker shape: give an
// implementation the same style in every plot.
struct PlotSeries {
  std::string name;
  std::size_t style = 0;
  std::vector<std::pair<double, double>> points;  // scatter: (x, y)
  std::vector<double> bars;                       // bar chart: one height per category
};

struct ScatterPlot {
  std::string title, x_label, y_label;
  bool x_log = false, y_log = true;
  std::vector<PlotSeries> series;
};

struct BarChart {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;
  std::vector<PlotSeries> series;
};

std::string scatter_svg(const ScatterPlot& plot);
std::string bar_chart_svg(const BarChart& chart);

// The colour of a style (a colour-blind-safe palette), for the HTML legend swatches too.
std::string style_colour(std::size_t style);

}  // namespace flashproof::report
