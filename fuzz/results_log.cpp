#include "fuzz/results_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/json.h"

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

// The record's key and status; false when the line is not a complete record.
bool parse_record(const std::string& line, std::uint64_t& index, std::string& impl, std::string& status,
                  Json* parsed = nullptr) {
  try {
    Json j = parse_json(line);
    const Json* i = j.find("index");
    const Json* m = j.find("impl");
    const Json* s = j.find("status");
    if (i == nullptr || m == nullptr || s == nullptr || m->type != Json::Type::string || i->integer(-1) < 0) return false;
    index = static_cast<std::uint64_t>(i->integer());
    impl = m->text;
    status = s->text;
    if (parsed) *parsed = std::move(j);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
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
      std::uint64_t index = 0;
      std::string impl, status;
      Json record;
      if (end != std::string::npos && parse_record(line, index, impl, status, &record)) {
        // A complete record of another campaign is refused, not dropped: resuming over it would
        // count its pairs as done here.
        if (const std::string why = foreign ? foreign(record) : ""; !why.empty())
          throw std::invalid_argument(path_ + " line " + std::to_string(line_number) + ": " + why);
        good.push_back(line);
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
  for (const std::string& line : good) remember(line);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd_ < 0) fail("cannot open", path_);
}

ResultsLog::~ResultsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void ResultsLog::remember(const std::string& line) {
  std::uint64_t index = 0;
  std::string impl, status;
  if (!parse_record(line, index, impl, status)) throw std::logic_error("not a campaign record: " + line.substr(0, 80));
  done_.insert({index, impl});
  statuses_.insert(status);
}

std::size_t ResultsLog::count(const std::string& status) const { return statuses_.count(status); }

void ResultsLog::append(const std::string& line) {
  if (line.find('\n') != std::string::npos) throw std::logic_error("a campaign record must be one line");
  remember(line);
  write_all(fd_, line + "\n", path_);  // one write: O_APPEND keeps it whole
  if (::fsync(fd_) != 0) fail("cannot flush", path_);
}

}  // namespace flashproof::fuzz
