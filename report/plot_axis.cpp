#include "report/plot_axis.h"

#include <algorithm>
#include <cmath>

#include "report/display_text.h"

namespace flashproof::report {
namespace {

// The slots for 0 and inf on a log axis, in decades: enough to read as apart, little space lost.
constexpr double kSlot = 0.7;
// Labelled ticks on an axis, at most (more would crowd a 400-pixel axis).
constexpr double kMaxTicks = 7;

// A round spacing (1, 2 or 5 times a power of 10) giving about kMaxTicks - 2 intervals.
double round_step(double span) {
  const double raw = span / (kMaxTicks - 2);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

Tick decade_tick(double at, int exponent) {
  // 0.01 ... 1000 in full; others as a power of ten.
  if (exponent >= -2 && exponent <= 3) return {at, number_text(std::pow(10.0, exponent)), ""};
  return {at, "10", std::to_string(exponent)};
}

}  // namespace

PlotAxis PlotAxis::fit(const std::vector<double>& values, bool log, bool counts) {
  PlotAxis a;
  a.log_ = log;
  double lo = INFINITY, hi = -INFINITY;
  for (const double x : values) {
    if (log && x <= 0) a.zero_slot_ = true;
    if (log && (std::isnan(x) || x == INFINITY)) a.top_slot_ = true;
    if (!std::isfinite(x) || (log && x <= 0)) continue;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (log) {
    a.lo_ = lo <= hi ? std::floor(std::log10(lo)) : 0;
    a.hi_ = lo <= hi ? std::ceil(std::log10(hi)) : 1;
    if (a.hi_ <= a.lo_) a.hi_ = a.lo_ + 1;
    // Label every step_-th decade, with the first and the last labelled.
    a.step_ = std::max(1.0, std::ceil((a.hi_ - a.lo_) / (kMaxTicks - 1)));
    a.lo_ = a.hi_ - a.step_ * std::ceil((a.hi_ - a.lo_) / a.step_);
    return a;
  }
  if (lo > hi) lo = 0, hi = 1;
  if (counts) lo = 0, hi *= 1.1;
  // One value (every case with head_dim 64): a span around it, not a sliver of it.
  if (hi <= lo) {
    const double half = std::max(1.0, std::abs(lo) / 2);
    lo -= half;
    hi += half;
  }
  a.step_ = round_step(hi - lo);
  if (counts) a.step_ = std::max(a.step_, 1.0);
  a.lo_ = std::floor(lo / a.step_) * a.step_;
  a.hi_ = std::ceil(hi / a.step_) * a.step_;
  return a;
}

double PlotAxis::units() const {
  return (hi_ - lo_) + (zero_slot_ ? kSlot : 0) + (top_slot_ ? kSlot : 0);
}

std::optional<double> PlotAxis::at(double x) const {
  if (!log_) {
    if (!std::isfinite(x)) return std::nullopt;
    return (x - lo_) / (hi_ - lo_);
  }
  if (std::isnan(x) || x == INFINITY) return 1.0;
  if (x <= 0) return 0.0;
  const double start = zero_slot_ ? kSlot : 0;
  return (start + std::log10(x) - lo_) / units();
}

std::vector<double> PlotAxis::breaks() const {
  std::vector<double> at;
  if (zero_slot_) at.push_back(kSlot / 2 / units());
  if (top_slot_) at.push_back(1 - kSlot / 2 / units());
  return at;
}

std::vector<Tick> PlotAxis::ticks() const {
  std::vector<Tick> ticks;
  if (!log_) {
    const long steps = std::lround((hi_ - lo_) / step_);
    for (long k = 0; k <= steps; ++k) {
      const double x = lo_ + static_cast<double>(k) * step_;
      ticks.push_back({*at(x), number_text(std::abs(x) < step_ / 2 ? 0.0 : x), ""});
    }
    return ticks;
  }
  if (zero_slot_) ticks.push_back({0.0, "0", ""});
  const int first = static_cast<int>(lo_), last = static_cast<int>(hi_);
  for (int e = first; e <= last; e += static_cast<int>(step_)) {
    ticks.push_back(decade_tick(*at(std::pow(10.0, e)), e));
    // An axis of one or two decades would show only 2 or 3 ticks: add 2 and 5 times each decade.
    if (last - first <= 2 && e < last && e >= -2 && e <= 3)
      for (const double m : {2.0, 5.0}) {
        const double x = m * std::pow(10.0, e);
        ticks.push_back({*at(x), number_text(x), ""});
      }
  }
  if (top_slot_) ticks.push_back({1.0, "inf", ""});
  return ticks;
}

}  // namespace flashproof::report
