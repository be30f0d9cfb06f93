#include "fuzz/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace flashproof::fuzz {
namespace {

std::string duration(double seconds) {
  char buf[32];
  const long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::ostream& os, bool terminal, std::optional<std::uint64_t> total, std::optional<double> minutes,
                   double interval_seconds)
    : os_(os), terminal_(terminal), total_(total), minutes_(minutes), interval_(interval_seconds),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

std::string Progress::line(std::uint64_t done, std::uint64_t failed, std::uint64_t crashed) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double per_minute = elapsed > 0 ? 60.0 * static_cast<double>(done) / elapsed : 0;
  char rate[64];
  std::snprintf(rate, sizeof rate, "%.1f cases/min", per_minute);
  std::string eta = "ETA ?";
  if (total_ && done > 0) eta = "ETA " + duration(elapsed / static_cast<double>(done) * static_cast<double>(*total_ - std::min(done, *total_)));
  if (minutes_) eta = "left " + duration(*minutes_ * 60 - elapsed);
  std::string bar;
  if (total_ && *total_ > 0) {
    const int width = 30, filled = static_cast<int>(width * std::min<double>(1.0, static_cast<double>(done) / static_cast<double>(*total_)));
    // Appended, not "[" + std::string(...): GCC 12 mistakes that for an overlapping memcpy (-Wrestrict).
    bar.append(1, '[').append(static_cast<std::size_t>(filled), '#').append(static_cast<std::size_t>(width - filled), '.');
    bar += "] ";
  }
  const std::string count = total_ ? std::to_string(done) + "/" + std::to_string(*total_) : std::to_string(done);
  return bar + count + "  " + rate + "  " + eta + "  failed " + std::to_string(failed) + "  crashed " +
         std::to_string(crashed) + "  elapsed " + duration(elapsed);
}

void Progress::update(std::uint64_t done, std::uint64_t failed, std::uint64_t crashed) {
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    if (std::chrono::duration<double>(now - last_).count() < 0.2 && done > 0) return;
    os_ << "\r" << line(done, failed, crashed) << "\x1b[K" << std::flush;
  } else {
    if (std::chrono::duration<double>(now - last_).count() < interval_) return;
    os_ << "fuzz: " << line(done, failed, crashed) << "\n" << std::flush;
  }
  last_ = now;
}

void Progress::finish(std::uint64_t done, std::uint64_t failed, std::uint64_t crashed) {
  os_ << (terminal_ ? "\r" : "fuzz: ") << line(done, failed, crashed) << (terminal_ ? "\x1b[K\n" : "\n") << std::flush;
}

}  // namespace flashproof::fuzz
