// A plot axis: where a value goes along it, and its ticks. Log axes show decades, plus a slot
// below them for values <= 0 (tick "0") and one above them for +inf and NaN (tick "inf"), so that
// exact results and overflows are plotted rather than dropped.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace flashproof::report {

struct Tick {
  double at = 0;         // position along the axis, in [0, 1]
  std::string text;      // "0", "10", "0.01", "inf", ...
  std::string exponent;  // non-empty for "10^exponent" (text is then "10")
};

class PlotAxis {
 public:
  // The axis covering values. Linear axes end on round numbers and ignore non-finite values; log
  // axes end on decades. counts: a linear axis of counts, from 0, whole-number ticks, with room
  // beyond the largest for a label.
  static PlotAxis fit(const std::vector<double>& values, bool log, bool counts = false);

  // x's position in [0, 1]; nullopt for a value a linear axis cannot show (non-finite).
  std::optional<double> at(double x) const;
  std::vector<Tick> ticks() const;
  // Positions between the decades and the slots for 0 and inf, where a plot draws a break.
  std::vector<double> breaks() const;
  bool log() const { return log_; }

 private:
  bool log_ = false;
  double lo_ = 0, hi_ = 1;  // data range; log axes: the decades' exponents
  double step_ = 1;         // tick spacing (log: in decades)
  bool zero_slot_ = false, top_slot_ = false;

  double units() const;  // log: length in decades, slots included
};

}  // namespace flashproof::report
