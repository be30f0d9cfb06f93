#include "report/svg_plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "report/display_text.h"
#include "report/plot_axis.h"

namespace flashproof::report {
namespace {

// Okabe & Ito's palette, without its yellow (unreadable on white).
constexpr std::array<const char*, 6> kColours = {"#0072B2", "#D55E00", "#009E73",
                                                 "#CC79A7", "#E69F00", "#56B4E9"};
// The plot area keeps its height; a legend wrapped over several lines makes the image taller.
constexpr double kWidth = 440, kPlotHeight = 212;
constexpr double kLeft = 74, kRight = 16, kBottom = 56;
constexpr double kInset = 8;          // between the frame and the outermost data
constexpr double kDodge = 5;          // pixels between implementations' markers at one x
constexpr double kBarThickness = 13;  // at least: a bar's count label fits beside it
constexpr double kLegendTop = 44, kLegendLine = 18;
constexpr double kTickFont = 12, kLabelFont = 13, kTitleFont = 15, kLegendFont = 13;
// DejaVu Sans's average character width, in font sizes: for laying out the legend.
constexpr double kCharWidth = 0.62;

std::string px(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", x);
  return buf;
}

// A marker of the style's shape, centred on (x, y), of radius r (about).
std::string marker(std::size_t style, double x, double y, double r = 4) {
  const std::string colour = style_colour(style);
  const std::string paint = "fill=\"" + colour + "\" fill-opacity=\"0.35\" stroke=\"" + colour +
                            "\" stroke-width=\"1.4\"";
  switch (style % 4) {
    case 0:
      return "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" + px(r) + "\" " + paint +
             "/>";
    case 1:
      return "<rect x=\"" + px(x - r) + "\" y=\"" + px(y - r) + "\" width=\"" + px(2 * r) +
             "\" height=\"" + px(2 * r) + "\" " + paint + "/>";
    case 2:
      return "<path d=\"M" + px(x) + " " + px(y - r - 1) + "L" + px(x + r + 1) + " " + px(y + r) +
             "L" + px(x - r - 1) + " " + px(y + r) + "Z\" " + paint + "/>";
    default:
      return "<path d=\"M" + px(x) + " " + px(y - r - 1) + "L" + px(x + r + 1) + " " + px(y) + "L" +
             px(x) + " " + px(y + r + 1) + "L" + px(x - r - 1) + " " + px(y) + "Z\" " + paint +
             "/>";
  }
}

std::string text(double x, double y, double size, const std::string& anchor,
                 const std::string& body, const std::string& extra = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-size=\"" + px(size) +
         "\" text-anchor=\"" + anchor + "\"" + extra + ">" + body + "</text>";
}

std::string tick_body(const Tick& t) {
  if (t.exponent.empty()) return html_escape(t.text);
  return html_escape(t.text) + "<tspan dy=\"-6\" font-size=\"" + px(kTickFont - 3) + "\">" +
         html_escape(t.exponent) + "</tspan>";
}

// The legend's items, wrapped into lines that fit the width; returns the legend's height.
double legend(std::ostringstream& s, const std::vector<PlotSeries>& series, double width) {
  double x = kLeft, y = kLegendTop;
  bool any = false;
  for (const PlotSeries& p : series) {
    const double item = 16 + kCharWidth * kLegendFont * static_cast<double>(p.name.size()) + 18;
    if (any && x + item > width - kRight) {
      x = kLeft;
      y += kLegendLine;
    }
    s << marker(p.style, x + 5, y - 4)
      << text(x + 15, y, kLegendFont, "start", html_escape(p.name));
    x += item;
    any = true;
  }
  return y - kLegendTop + kLegendLine;
}

// The plot area and what is drawn around it: frame, grid, ticks, labels, title, legend.
struct Frame {
  double x0, x1, y0, y1;  // the frame's edges in pixels
  double x(double fraction) const { return x0 + kInset + fraction * (x1 - x0 - 2 * kInset); }
  double y(double fraction) const { return y1 - kInset - fraction * (y1 - y0 - 2 * kInset); }
};

Frame open_svg(std::ostringstream& s, double width, const std::string& title,
               const std::vector<PlotSeries>& series, double left = kLeft,
               double plot_height = kPlotHeight) {
  std::ostringstream items;
  const double top = kLegendTop + legend(items, series, width);
  const double height = top + plot_height + kBottom;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(width) << "\" height=\""
    << px(height) << "\" viewBox=\"0 0 " << px(width) << " " << px(height)
    << "\" role=\"img\" font-family=\"DejaVu Sans, Verdana, sans-serif\" fill=\"#222\">"
    << "<title>" << html_escape(title) << "</title>"
    << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>"
    << text(width / 2, 22, kTitleFont, "middle", html_escape(title), " font-weight=\"bold\"")
    << items.str();
  return {left, width - kRight, top, top + plot_height};
}

void draw_axes(std::ostringstream& s, const Frame& f, const std::vector<Tick>& x_ticks,
               const std::vector<Tick>& y_ticks, const std::string& x_label,
               const std::string& y_label, bool x_grid, bool y_grid) {
  for (const Tick& t : y_ticks) {
    const double y = f.y(t.at);
    if (y_grid)
      s << "<line x1=\"" << px(f.x0 - 4) << "\" y1=\"" << px(y) << "\" x2=\"" << px(f.x1)
        << "\" y2=\"" << px(y) << "\" stroke=\"#e3e3e3\"/>";
    s << text(f.x0 - 6, y + 4, kTickFont, "end", tick_body(t));
  }
  for (const Tick& t : x_ticks) {
    const double x = f.x(t.at);
    if (x_grid)
      s << "<line x1=\"" << px(x) << "\" y1=\"" << px(f.y0) << "\" x2=\"" << px(x) << "\" y2=\""
        << px(f.y1 + 4) << "\" stroke=\"#e3e3e3\"/>";
    s << text(x, f.y1 + 18, kTickFont, "middle", tick_body(t));
  }
  s << "<rect x=\"" << px(f.x0) << "\" y=\"" << px(f.y0) << "\" width=\"" << px(f.x1 - f.x0)
    << "\" height=\"" << px(f.y1 - f.y0) << "\" fill=\"none\" stroke=\"#666\"/>"
    << text((f.x0 + f.x1) / 2, f.y1 + 44, kLabelFont, "middle", html_escape(x_label));
  const double cy = (f.y0 + f.y1) / 2;
  s << text(18, cy, kLabelFont, "middle", html_escape(y_label),
            " transform=\"rotate(-90 18 " + px(cy) + ")\"");
}

// Dashed lines across the frame where a log axis's slot for 0 or inf begins.
void draw_breaks(std::ostringstream& s, const Frame& f, const PlotAxis& x_axis,
                 const PlotAxis& y_axis) {
  const std::string dashes = "\" stroke=\"#9a9a9a\" stroke-dasharray=\"5 4\"/>";
  for (const double b : y_axis.breaks())
    s << "<line x1=\"" << px(f.x0) << "\" y1=\"" << px(f.y(b)) << "\" x2=\"" << px(f.x1)
      << "\" y2=\"" << px(f.y(b)) << dashes;
  for (const double b : x_axis.breaks())
    s << "<line x1=\"" << px(f.x(b)) << "\" y1=\"" << px(f.y0) << "\" x2=\"" << px(f.x(b))
      << "\" y2=\"" << px(f.y1) << dashes;
}

}  // namespace

std::string style_colour(std::size_t style) { return kColours[style % kColours.size()]; }

std::string scatter_svg(const ScatterPlot& plot) {
  std::vector<double> xs, ys;
  for (const PlotSeries& p : plot.series)
    for (const auto& [x, y] : p.points) xs.push_back(x), ys.push_back(y);
  const PlotAxis x_axis = PlotAxis::fit(xs, plot.x_log);
  const PlotAxis y_axis = PlotAxis::fit(ys, plot.y_log);

  std::ostringstream s;
  const Frame f = open_svg(s, kWidth, plot.title, plot.series);
  draw_axes(s, f, x_axis.ticks(), y_axis.ticks(), plot.x_label, plot.y_label, true, true);
  draw_breaks(s, f, x_axis, y_axis);
  if (xs.empty()) s << text((f.x0 + f.x1) / 2, (f.y0 + f.y1) / 2, kLabelFont, "middle", "no data");
  // Smaller markers where there are many, so that clusters keep some shape.
  const double radius = xs.size() < 300 ? 4 : xs.size() < 3000 ? 3 : 2.5;
  const double middle = (static_cast<double>(plot.series.size()) - 1) / 2;
  // Markers landing on the same pixel add nothing: one each keeps large campaigns' pages small.
  std::vector<std::set<std::pair<long, long>>> drawn(plot.series.size());
  // The series' points in turn (the first of each, the second of each, ...), so that no
  // implementation's markers all lie on top of the others'.
  for (std::size_t i = 0, left = xs.size(); left > 0; ++i)
    for (std::size_t k = 0; k < plot.series.size(); ++k) {
      const PlotSeries& p = plot.series[k];
      if (i >= p.points.size()) continue;
      --left;
      const auto fx = x_axis.at(p.points[i].first), fy = y_axis.at(p.points[i].second);
      if (!fx || !fy) continue;
      const double cx = f.x(*fx) + (static_cast<double>(k) - middle) * kDodge, cy = f.y(*fy);
      if (drawn[k].insert({std::lround(cx), std::lround(cy)}).second)
        s << marker(p.style, cx, cy, radius);
    }
  s << "</svg>";
  return s.str();
}

std::string bar_chart_svg(const BarChart& chart) {
  std::vector<double> lengths = {0};
  for (const PlotSeries& p : chart.series)
    lengths.insert(lengths.end(), p.bars.begin(), p.bars.end());
  const PlotAxis x_axis = PlotAxis::fit(lengths, false, true);  // counts

  // Bars run sideways, so that the categories' labels sit on the left, each on its own line.
  std::size_t longest = 0;
  for (const std::string& c : chart.categories) longest = std::max(longest, c.size());
  const double left = 34 + kCharWidth * kTickFont * static_cast<double>(longest) + 8;
  // Each bar thick enough for its count's label beside it.
  const double categories = static_cast<double>(chart.categories.size());
  const double series = static_cast<double>(std::max<std::size_t>(1, chart.series.size()));
  const double height =
      std::max(kPlotHeight, categories * (series * kBarThickness + 10) + 2 * kInset);
  std::ostringstream s;
  const Frame f = open_svg(s, kWidth, chart.title, chart.series, std::max(kLeft, left), height);
  std::vector<Tick> y_ticks;
  for (std::size_t c = 0; c < chart.categories.size(); ++c)
    y_ticks.push_back({1 - (static_cast<double>(c) + 0.5) / categories, chart.categories[c], ""});
  draw_axes(s, f, x_axis.ticks(), y_ticks, chart.x_label, chart.y_label, true, false);
  const double band = (f.y(0) - f.y(1)) / categories;
  const double bar = band * 0.8 / series;
  for (std::size_t k = 0; k < chart.series.size(); ++k) {
    const PlotSeries& p = chart.series[k];
    for (std::size_t c = 0; c < p.bars.size() && c < chart.categories.size(); ++c) {
      if (p.bars[c] <= 0) continue;
      const double y =
          f.y(1) + band * (static_cast<double>(c) + 0.1) + bar * static_cast<double>(k);
      const double x = f.x(*x_axis.at(p.bars[c]));
      s << "<rect x=\"" << px(f.x(0)) << "\" y=\"" << px(y) << "\" width=\"" << px(x - f.x(0))
        << "\" height=\"" << px(bar - 1) << "\" fill=\"" << style_colour(p.style) << "\"/>"
        << text(x + 4, y + bar / 2 + 4, kTickFont - 1, "start", number_text(p.bars[c]));
    }
  }
  s << "</svg>";
  return s.str();
}

}  // namespace flashproof::report
