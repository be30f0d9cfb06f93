#include "fuzz/results_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/json.h"
#include "fuzz/record_layout.h"

namespace flashproof::fuzz {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", path);
    done += static_cast<std::size_t>(n);
  }
}

// A line's record and its key and status; nullopt when the line is not a complete record (a
// status none of core/verdict.h's names counts as incomplete: the pair is run again).
struct KeyedRecord {
  json::Value record;
  std::uint64_t index;
  std::string impl;
  CaseStatus status;
};

std::optional<KeyedRecord> parse_record(const std::string& line) {
  try {
    json::Value j = json::parse(line);
    const json::Value* i = json::find(j, "index");
    const json::Value* m = json::find(j, "impl");
    const json::Value* s = json::find(j, "status");
    if (i == nullptr || m == nullptr || s == nullptr || !m->is_string() || !json::unsigned64(*i)) return std::nullopt;
    const std::optional<CaseStatus> status = parse_case_status(json::string(*s).value_or(""));
    if (!status) return std::nullopt;
    KeyedRecord r{{}, *json::unsigned64(*i), *json::string(*m), *status};
    r.record = std::move(j);
    return r;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

void fsync_directory_of(const std::string& path) {
  const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open the directory of", path);
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) fail("cannot flush the directory of", path);
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot write", tmp);
  write_all(fd, text, tmp);
  if (::fsync(fd) != 0 || ::close(fd) != 0) fail("cannot write", tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot replace", path);
  fsync_directory_of(path);
}

ResultsLog::ResultsLog(std::string path, const Foreign& foreign) : path_(std::move(path)) {
  std::vector<std::string> good;
  {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    const std::string all = text.str();
    std::size_t begin = 0, line_number = 0;
    while (begin < all.size()) {
      const std::size_t end = all.find('\n', begin);
      const std::string line = all.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
      ++line_number;
      std::optional<KeyedRecord> r;
      if (end != std::string::npos) r = parse_record(line);
      if (r) {
        // A complete record of another campaign is refused, not dropped: resuming over it would
        // count its pairs as done here.
        if (const std::string why = foreign ? foreign(r->record) : ""; !why.empty())
          throw std::invalid_argument(path_ + " line " + std::to_string(line_number) + ": " + why);
        good.push_back(line);
        remember(r->index, r->impl, r->status);
      } else {
        ++dropped_;
      }
      if (end == std::string::npos) break;
      begin = end + 1;
    }
  }
  if (dropped_ > 0) {  // rewrite without the broken lines, atomically
    std::string text;
    for (const std::string& line : good) text += line + "\n";
    write_file_atomically(path_, text);
  }
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd_ < 0) fail("cannot open", path_);
}

ResultsLog::~ResultsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsLog::remember(std::uint64_t index, const std::string& impl, CaseStatus status) {
  done_.insert({index, impl});
  statuses_.insert(status);
}

std::size_t ResultsLog::count(CaseStatus status) const { return statuses_.count(status); }

void ResultsLog::append(const json::Value& record) {
  if (!record.is_object()) throw std::logic_error("a campaign record must be an object");
  const std::optional<std::uint64_t> index = json::unsigned64(record.value("index", json::Value()));
  const std::optional<std::string> impl = json::string(record.value("impl", json::Value()));
  const std::optional<CaseStatus> status =
      parse_case_status(json::string(record.value("status", json::Value())).value_or(""));
  if (!index || !impl || !status) throw std::logic_error("a campaign record needs an index, an impl and a status");
  // One line, written with one write: O_APPEND keeps it whole.
  write_all(fd_, json::write(record, fuzz_record_layout()) + "\n", path_);
  if (::fsync(fd_) != 0) fail("cannot flush", path_);
  remember(*index, *impl, *status);
}

}  // namespace flashproof::fuzz
