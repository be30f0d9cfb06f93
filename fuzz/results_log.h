// The campaign's durable results: cases.jsonl, one JSON record per line, appended with one write
// and fsync'ed as each case finishes, so a campaign killed at any moment loses no finished case.
// Opening it again (a resumed campaign) reads the finished (index, implementation) pairs and cuts
// off a last line that a kill left incomplete.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include "core/json.h"
#include "core/verdict.h"

namespace flashproof::fuzz {

// A whole file or none: text written to a temporary file in the same directory, flushed to disk,
// renamed over path, and the directory flushed, so a kill at any moment leaves the old file or the
// new one. Throws std::runtime_error when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);

class ResultsLog {
 public:
  // Why a complete record does not belong here (empty when it does).
  using Foreign = std::function<std::string(const json::Value& record)>;
  // Creates the file when missing. Throws std::runtime_error when it cannot be read or written,
  // std::invalid_argument ("PATH line N: WHY") for a record that `foreign` refuses.
  explicit ResultsLog(std::string path, const Foreign& foreign = {});
  ~ResultsLog();
  ResultsLog(const ResultsLog&) = delete;
  ResultsLog& operator=(const ResultsLog&) = delete;

  bool done(std::uint64_t index, const std::string& impl) const { return done_.count({index, impl}) > 0; }
  std::size_t records() const { return done_.size(); }
  std::size_t dropped_lines() const { return dropped_; }  // incomplete or unreadable lines cut off
  // Status counts of the records read at opening and appended since.
  std::size_t count(CaseStatus status) const;

  // Appends one record (an object with "index", "impl" and "status"; fuzz_record_layout()).
  void append(const json::Value& record);

 private:
  void remember(std::uint64_t index, const std::string& impl, CaseStatus status);
  std::string path_;
  int fd_ = -1;
  std::set<std::pair<std::uint64_t, std::string>> done_;
  std::multiset<CaseStatus> statuses_;
  std::size_t dropped_ = 0;
};

}  // namespace flashproof::fuzz
