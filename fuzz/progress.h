// Campaign progress on stderr: on a terminal a bar redrawn in place with the rate and the ETA;
// otherwise (a batch job's log) a plain line every `interval` seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>

namespace flashproof::fuzz {

class Progress {
 public:
  // total: the records this run will produce at most, when known (a --cases campaign); minutes
  // for a --minutes campaign.
  Progress(std::ostream& os, bool terminal, std::optional<std::uint64_t> total, std::optional<double> minutes,
           double interval_seconds = 10);
  // A pair counted in the total turned out to need no record (its implementation does not run it).
  void drop_from_total() {
    if (total_ && *total_ > 0) --*total_;
  }
  // done: records finished in this run.
  void update(std::uint64_t done, std::uint64_t failed, std::uint64_t crashed);
  void finish(std::uint64_t done, std::uint64_t failed, std::uint64_t crashed);

 private:
  std::string line(std::uint64_t done, std::uint64_t failed, std::uint64_t crashed) const;
  std::ostream& os_;
  bool terminal_;
  std::optional<std::uint64_t> total_;
  std::optional<double> minutes_;
  double interval_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace flashproof::fuzz
