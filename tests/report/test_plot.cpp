// The plots' axes and SVG: ticks for 0 and inf on log axes, round linear ticks, titles, labels,
// legends, and one marker per pixel.
#include <gtest/gtest.h>

#include <limits>

#include "report/plot_axis.h"
#include "report/svg_plot.h"

namespace flashproof::report {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PlotAxis, LogAxisHasDecadesAndSlotsForZeroAndInf) {
  const PlotAxis a = PlotAxis::fit({0, 3, 250, kInf}, true);
  const std::vector<Tick> ticks = a.ticks();
  ASSERT_EQ(ticks.size(), 6u);  // 0, 1, 10, 100, 1000, inf
  EXPECT_EQ(ticks.front().text, "0");
  EXPECT_EQ(ticks.front().at, 0);
  EXPECT_EQ(ticks[1].text, "1");
  EXPECT_EQ(ticks[4].text, "1000");
  EXPECT_EQ(PlotAxis::fit({1e-5, 1e9}, true).ticks().back().exponent, "9");
  EXPECT_EQ(ticks.back().text, "inf");
  EXPECT_EQ(ticks.back().at, 1);
  EXPECT_LT(*a.at(3), *a.at(250));
  EXPECT_GT(*a.at(3), ticks[1].at);
  EXPECT_EQ(*a.at(std::numeric_limits<double>::quiet_NaN()), 1);
}

TEST(PlotAxis, LinearAxisEndsOnRoundNumbers) {
  const PlotAxis a = PlotAxis::fit({16, 64, 40}, false);
  const std::vector<Tick> ticks = a.ticks();
  EXPECT_EQ(ticks.front().text, "10");
  EXPECT_EQ(ticks.back().text, "70");
  EXPECT_FALSE(a.at(kInf).has_value());
  EXPECT_EQ(PlotAxis::fit({0, 7}, false, true).ticks().front().text, "0");
  EXPECT_EQ(PlotAxis::fit({3, 7}, false, true).ticks()[1].text, "2");  // counts: whole numbers
  // One value: an axis around it.
  const std::vector<Tick> single = PlotAxis::fit({64}, false).ticks();
  EXPECT_LT(std::stod(single.front().text), 64);
  EXPECT_GT(std::stod(single.back().text), 64);
  EXPECT_GE(std::stod(single[1].text) - std::stod(single[0].text), 1);
}

TEST(PlotAxis, LogAxisOfOneDecadeAddsTwoAndFiveTimes) {
  std::vector<std::string> texts;
  for (const Tick& t : PlotAxis::fit({120, 700}, true).ticks()) texts.push_back(t.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"100", "200", "500", "1000"}));
}

TEST(SvgPlot, ScatterHasTitleLabelsLegendAndOneMarkerPerPixel) {
  ScatterPlot p;
  p.title = "fp16 O: error vs head_dim";
  p.x_label = "head_dim";
  p.y_label = "largest error (ULPs)";
  p.x_log = false;
  PlotSeries naive{"naive", 0, {}, {}}, fa2{"fa2", 1, {}, {}};
  for (int k = 0; k < 1000; ++k) naive.points.emplace_back(64, 3);  // all on one pixel
  fa2.points = {{16, 1}, {64, 100}};
  p.series = {naive, fa2};
  const std::string svg = scatter_svg(p);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  for (const char* s :
       {"fp16 O: error vs head_dim", ">head_dim<", "largest error (ULPs)", ">naive<", ">fa2<"})
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  EXPECT_EQ(occurrences(svg, "<circle"), 2u);  // one for the 1000 points, one in the legend
  EXPECT_EQ(occurrences(svg, "<rect x="),
            3u + 1u);  // fa2's 2 markers, its legend marker, the frame
}

TEST(SvgPlot, BarChartLabelsCategoriesAndBars) {
  BarChart c;
  c.title = "error / bound";
  c.categories = {"[0, 1/64)", ">= 1"};
  c.series = {{"naive", 0, {}, {5, 0}}, {"fa2", 1, {}, {2, 1}}};
  const std::string svg = bar_chart_svg(c);
  for (const char* s : {">[0, 1/64)<", ">&gt;= 1<", ">5<", ">2<", ">1<"})
    EXPECT_NE(svg.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace flashproof::report
